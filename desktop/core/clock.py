"""Wall and monotonic time, and the gap between them that betrays sleep or a clock jump."""

import time
from dataclasses import dataclass
from typing import Protocol


class Clock(Protocol):
    def wall(self) -> float: ...
    def mono(self) -> float: ...


class SystemClock:
    def wall(self) -> float:
        return time.time()

    def mono(self) -> float:
        return time.monotonic()


@dataclass(frozen=True)
class Gap:
    started: float  # wall time of the last check before the gap
    ended: float  # wall time it was noticed


class GapDetector:
    """Checked every few seconds: when the wall clock moved much more than the monotonic one (the machine
    slept, or the clock was set forward), that is a gap."""

    def __init__(self, clock: Clock, threshold: float = 15.0) -> None:
        self._clock, self._threshold = clock, threshold
        self._wall, self._mono = clock.wall(), clock.mono()

    def check(self) -> Gap | None:
        wall, mono = self._clock.wall(), self._clock.mono()
        drift = (wall - self._wall) - (mono - self._mono)
        gap = Gap(self._wall, wall) if drift > self._threshold else None
        self._wall, self._mono = wall, mono
        return gap
