"""A command's output file followed as it grows, for request turns and background tasks alike: a bounded read at a
time, so a flood cannot hold the daemon's loop; the loop runs between reads; what the command wrote before
it ended is all read before its end is reported."""

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path

from desktop.tasks.supervisor import Exit

READ_PER_TICK = 256 << 10  # through the console pipeline, a pass over many lines at once (~12 ms)
EVENTS_PER_TICK = 64 << 10  # through a runtime's parser, a line at a time (~7 ms of lines as short as "y")


class Follower:
    def __init__(self, output: Path, feed: Callable[[bytes], None], per_read: int = READ_PER_TICK) -> None:
        """`feed(data)`: each read's bytes, in order (`offset` already counts them); `per_read`: the most a read
        takes, what `feed` gets through in about 10 ms."""
        self.output, self.offset, self.per_read, self._feed = output, 0, per_read, feed

    def read(self) -> int:
        """Hand the bytes written since the last read (`per_read` at most) to `feed`; how many there were."""
        try:
            with open(self.output, "rb") as f:
                f.seek(self.offset)
                data = f.read(self.per_read)
        except OSError:
            return 0
        if data:
            self.offset += len(data)
            self._feed(data)
        return len(data)

    def catch_up(self) -> None:
        """Read all there is now, at once: for a decision that needs the latest output."""
        while self.read() == self.per_read:
            pass

    async def drain(self) -> None:
        """Read all there is now, letting everything else run between reads."""
        while self.read() == self.per_read:
            await asyncio.sleep(0)

    async def until(self, ended: Awaitable[Exit], every: float) -> Exit:
        """Read as the output comes (looking every `every` seconds when nothing waits) until the command `ended`
        and all it wrote is read; how it ended."""
        waiter = asyncio.ensure_future(ended)
        try:
            while not waiter.done():
                if self.read() == self.per_read:
                    await asyncio.sleep(0)  # more is waiting: read on after the others had their turn
                else:
                    await asyncio.wait({waiter}, timeout=every)
        finally:
            if not waiter.done():
                waiter.cancel()
        await self.drain()
        return waiter.result()


class Lines:
    """The whole lines of a byte stream, decoded (invalid UTF-8 as U+FFFD). The unfinished last line waits for its
    newline; one longer than `longest` bytes is dropped rather than kept growing."""

    def __init__(self, longest: int) -> None:
        self._longest = longest
        self._partial: list[bytes] = []  # the unfinished line, in the pieces it came in
        self._size = 0

    def feed(self, data: bytes) -> list[str]:
        end = data.rfind(b"\n")
        if end < 0:
            self._keep(data)
            return []
        whole = b"".join([*self._partial, data[:end]])
        self._partial, self._size = [], 0
        self._keep(data[end + 1 :])
        return whole.decode("utf-8", "replace").split("\n")  # a newline never ends a character: alike per line

    def _keep(self, piece: bytes) -> None:
        self._size += len(piece)
        if self._size > self._longest:  # no runtime writes such a line: output without newlines
            self._partial, self._size = [], 0
        elif piece:
            self._partial.append(piece)
