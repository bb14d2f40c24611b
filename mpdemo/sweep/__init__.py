"""The size sweep, where mixed precision pays here: sizes and spec (torch-free) -> plan -> run
(each point's precisions timed interleaved) -> events -> notes."""
