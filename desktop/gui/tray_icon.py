"""The tray icon's pictures, drawn at each size a tray asks for (16 to 64 px) so that they stay sharp at 22: a glyph
for what the agents do (idle; running as a ring that fills with the progress; paused; failed) and, while requests
wait for the owner, a red badge with their count beside the glyph, not over it. Every colour reads on a light panel
and on a dark one (3:1 or more against #f5f5f5 and #202020); the glyphs are resources/tray-*.svg."""

from collections.abc import Callable

from PySide6.QtCore import QRect, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QFont, QIcon, QIconEngine, QPainter, QPen, QPixmap

from desktop.resources import resource

GLYPHS = ("idle", "running", "paused", "failed", "waiting")  # waiting: the notifications' and the balloon's picture
SIZES = (16, 22, 24, 32, 48, 64)  # what a tray that asks which sizes there are is told (the SNI hosts)
BADGE = "#dc2626"
TRACK, PROGRESS = "#808080", "#1d7bd8"  # the ring's empty part and its filled part
RING_RADIUS, RING_WIDTH = 24 / 64, 10 / 64  # of the glyph's side, as in tray-running.svg
GLYPH_BESIDE_BADGE = 0.62  # of the side: the glyph's square, top left, when the badge takes the bottom right
BADGE_CORNER, BADGE_RADIUS, PILL_WIDTH = 1.0, 0.24, 0.52  # the badge's bottom right corner; a pill holds '9+'


class Pictures:
    def __init__(self) -> None:
        self._glyphs: dict[str, QIcon] = {}
        self._made: tuple[str, int | None, int] | None = None
        self._icon = QIcon()

    def glyph(self, name: str) -> QIcon:
        """One of resources/tray-*.svg (read when first wanted)."""
        if name not in self._glyphs:
            self._glyphs[name] = QIcon(str(resource(f"tray-{name}.svg")))
        return self._glyphs[name]

    def icon(self, activity: str, progress: float | None, waiting: int) -> QIcon:
        """The picture for the summary's activity, its progress (0 to 100) if known, and how many wait; drawn at a
        size when the tray asks for it."""
        made = (activity if activity in GLYPHS else "idle", None if progress is None else round(progress), waiting)
        if made != self._made:  # the same picture is not made again
            self._made = made
            self._icon = QIcon(_Drawn(lambda size: self._draw(size, *made)))
        return self._icon

    def _draw(self, size: int, activity: str, progress: int | None, waiting: int) -> QPixmap:
        picture = QPixmap(size, size)
        picture.fill(Qt.GlobalColor.transparent)
        painter = QPainter(picture)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        side = round(size * GLYPH_BESIDE_BADGE) if waiting else size
        if activity == "running" and progress is not None:
            _ring(painter, side, min(max(progress, 0), 100))
        else:
            self.glyph(activity).paint(painter, QRect(0, 0, side, side))
        if waiting:
            _badge(painter, size, waiting)
        painter.end()
        return picture


class _Drawn(QIconEngine):
    """An icon drawn at the size asked for, each size once (an icon nobody shows is never drawn)."""

    def __init__(self, draw: Callable[[int], QPixmap]) -> None:
        super().__init__()
        self._draw = draw
        self._drawn: dict[int, QPixmap] = {}

    def pixmap(self, size: QSize, mode: QIcon.Mode, state: QIcon.State) -> QPixmap:
        side = max(min(size.width(), size.height()), 1)
        if side not in self._drawn:
            self._drawn[side] = self._draw(side)
        return self._drawn[side]

    def paint(self, painter: QPainter, rect: QRect, mode: QIcon.Mode, state: QIcon.State) -> None:
        painter.drawPixmap(rect, self.pixmap(rect.size(), mode, state))

    def availableSizes(self, mode: QIcon.Mode = QIcon.Mode.Normal, state: QIcon.State = QIcon.State.Off) -> list[QSize]:
        return [QSize(side, side) for side in SIZES]

    def clone(self) -> QIconEngine:
        return _Drawn(self._draw)


def _ring(painter: QPainter, side: int, progress: int) -> None:
    """The running ring: grey, filled clockwise from the top with the progress."""
    radius = side * RING_RADIUS
    box = QRectF(side / 2 - radius, side / 2 - radius, 2 * radius, 2 * radius)
    for colour, span in ((TRACK, 360), (PROGRESS, 360 * progress / 100)):
        painter.setPen(QPen(QColor(colour), side * RING_WIDTH, Qt.PenStyle.SolidLine, Qt.PenCapStyle.FlatCap))
        painter.drawArc(box, 90 * 16, -round(span * 16))


def _badge(painter: QPainter, size: int, count: int) -> None:
    """The red badge in the bottom right corner with how many wait: a disc, or a pill for '9+'."""
    text = str(count) if count < 10 else "9+"
    height = 2 * size * BADGE_RADIUS
    width = height if len(text) == 1 else size * PILL_WIDTH
    badge = QRectF(size * BADGE_CORNER - width, size * BADGE_CORNER - height, width, height)
    painter.setPen(Qt.PenStyle.NoPen)
    painter.setBrush(QColor(BADGE))
    painter.drawRoundedRect(badge, height / 2, height / 2)
    font = QFont()
    font.setBold(True)
    font.setPixelSize(max(round(size * (0.36 if len(text) == 1 else 0.3)), 6))
    painter.setFont(font)
    painter.setPen(QColor("#ffffff"))
    painter.drawText(badge, Qt.AlignmentFlag.AlignCenter, text)
