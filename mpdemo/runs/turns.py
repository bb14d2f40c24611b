"""The baton the runs of a comparison pass round: one step of each run a round, in ABBA order,
so a burst of another process's load lands on both sides; then their evaluations in turn."""

from __future__ import annotations

import threading
from collections.abc import Callable

from ..engine.cores import Cores

Swap = Callable[[int | None, int], None]


class Baton:
    """Turns for n runs: take() waits for this run's turn; done() leaves the rotation."""

    def __init__(self, n: int, swap: Swap | None = None) -> None:
        self.swap = swap
        self.pause: Callable[[], None] | None = None  # set by take_turns: hand the thread back
        self.cond = threading.Condition()
        self.training = list(range(n))  # runs still in the rotation, in the grid's order
        self.round = 0
        self.order: list[int] = list(self.training)
        self.pos = 0
        self.holder: int | None = None  # who holds the baton now (None: nobody)
        self.last: int | None = None  # who held it last (its state is the one in place)
        self.evaluating: list[int] = []  # runs waiting for their evaluation turn, in order
        self.gone: set[int] = set()  # runs that finished for good

    def _due(self) -> int | None:
        """Whose turn it is: the rotation's next run, or once it is empty the next evaluation."""
        if self.training:
            return self.order[self.pos]
        return self.evaluating[0] if self.evaluating else None

    def _reorder(self) -> None:
        # ABBA: the order turns round every round, so neither run always follows the other.
        self.order = list(self.training if self.round % 2 == 0 else reversed(self.training))
        self.pos = 0

    def due(self) -> int | None:
        """The run that holds the baton, or else the one whose turn it is (None: nobody's)."""
        with self.cond:
            return self.holder if self.holder is not None else self._due()

    def take(self, i: int) -> None:
        """Block until it is run i's turn, then hold the baton (no-op while i holds it)."""
        while True:
            with self.cond:
                if self.holder == i:
                    return
                if self.holder is None and self._due() == i:
                    self.holder = i
                    if self.swap is not None and self.last != i:
                        self.swap(self.last, i)
                    self.last = i
                    return
                if self.pause is None:
                    self.cond.wait()
                    continue
            # Outside the lock: the scheduler and the other runs share this thread.
            self.pause()

    def give(self, i: int) -> None:
        """Run i's step is done: the baton goes to the next run of the rotation."""
        with self.cond:
            if self.holder != i:
                return
            self.holder = None
            if i in self.training and self.order and self.order[self.pos] == i:
                self.pos += 1  # the rotation moves on; a new round in the other order at its end
                if self.pos >= len(self.order):
                    self.round += 1
                    self._reorder()
            self.cond.notify_all()

    def done(self, i: int, evaluate: bool) -> None:
        """Run i trained its last step: out of the rotation; with evaluate, it waits for its
        evaluation turn, after every run's training (not timed against the others' steps)."""
        with self.cond:
            self._leave(i)
            if evaluate and i not in self.gone:
                # In the grid's order: the runs end (and reach the files) as they were asked.
                self.evaluating.append(i)
                self.evaluating.sort()
            self.cond.notify_all()
        if evaluate:
            self.take(i)

    def finish(self, i: int) -> None:
        """Run i ended for good (finished, stopped or failed): it never takes the baton again."""
        with self.cond:
            self._leave(i)
            if i in self.evaluating:
                self.evaluating.remove(i)
            self.gone.add(i)
            self.cond.notify_all()

    def _leave(self, i: int) -> None:
        if self.holder == i:
            self.holder = None
        if i not in self.training:
            return
        due = self.order[self.pos] if self.training else None
        self.training.remove(i)
        # Take i out of this round's order; whoever was due stays due (unless it was i).
        k = self.order.index(i)
        self.order.pop(k)
        if k < self.pos:
            self.pos -= 1
        if not self.training:
            self.order, self.pos = [], 0
        elif self.pos >= len(self.order):
            self.round += 1
            self._reorder()
        elif due != i:
            self.pos = self.order.index(due)


class Pace:
    """What the runs share besides the baton: when the comparison started, and their Cores."""

    def __init__(self, started_at: float) -> None:
        self.started_at = started_at  # perf_counter at the comparison's start (steps' wall_s)
        self.cores: Cores | None = None  # once the comparison runs


class Lane:
    """One run's handle on the baton (what the Recorder calls between its steps)."""

    def __init__(self, baton: Baton, i: int, pace: Pace) -> None:
        self.baton, self.i, self.pace = baton, i, pace

    def take(self) -> None:
        """Wait for this run's turn."""
        self.baton.take(self.i)

    def give(self) -> None:
        """Hand the turn to the next run."""
        self.baton.give(self.i)

    def done(self) -> None:
        """Trained its last step: wait for the others, then a last turn (evaluation, end)."""
        self.baton.done(self.i, evaluate=True)

    def finish(self) -> None:
        """Ended for good."""
        self.baton.finish(self.i)
