"""ui.train"""
