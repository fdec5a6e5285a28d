"""An orbit camera: yaw/pitch around a target point, a distance, and a perspective projection.

2D views (discs in a box, a field) get the same camera looking straight down at z = 0 with orbiting
off: the plane is parallel to the image, so the perspective shows it without distortion and zoom
and pan stay exact.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

_UP = np.array([0.0, 1.0, 0.0])


def look_at(eye: np.ndarray, target: np.ndarray, up: np.ndarray = _UP) -> np.ndarray:
    """World -> view matrix (row-major, column vectors: v_view = M @ v_world)."""
    forward = target - eye
    forward /= np.linalg.norm(forward)
    right = np.cross(forward, up)
    if np.linalg.norm(right) < 1e-9:  # looking straight up or down: any right vector will do
        right = np.array([1.0, 0.0, 0.0])
    right /= np.linalg.norm(right)
    true_up = np.cross(right, forward)
    m = np.identity(4)
    m[0, :3], m[1, :3], m[2, :3] = right, true_up, -forward
    m[:3, 3] = -m[:3, :3] @ eye
    return m


def perspective(fov_y_deg: float, aspect: float, near: float, far: float) -> np.ndarray:
    f = 1.0 / math.tan(math.radians(fov_y_deg) / 2.0)
    m = np.zeros((4, 4))
    m[0, 0] = f / aspect
    m[1, 1] = f
    m[2, 2] = (far + near) / (near - far)
    m[2, 3] = 2.0 * far * near / (near - far)
    m[3, 2] = -1.0
    return m


@dataclass
class OrbitCamera:
    target: np.ndarray
    distance: float
    yaw: float  # degrees, around +y; 0 looks along -z
    pitch: float  # degrees above the target's horizon
    fov_y: float = 40.0
    min_distance: float = 0.2
    max_distance: float = 5000.0
    extent: float = 100.0  # how far the scene reaches from the target: sets the far plane
    orbit_enabled: bool = True  # False for 2D scenes: the view stays top-down

    @classmethod
    def framing(cls, radius: float = 40.0, z_min: float = -80.0, z_max: float = 80.0) -> OrbitCamera:
        """A view of the whole trough, from the front-right and a little above."""
        half_len = 0.5 * (z_max - z_min)
        reach = math.hypot(radius, half_len)
        target = np.array([0.0, -0.3 * radius, 0.5 * (z_min + z_max)])
        distance = 2.9 * reach
        # The floor reaches 2.5x the trough's size: keep it inside the far plane and the zoom range.
        return cls(
            target=target,
            distance=distance,
            yaw=32.0,
            pitch=30.0,
            max_distance=max(5000.0, 4.0 * distance),
            extent=4.0 * reach,
        )

    @classmethod
    def for_trough(cls, trough) -> OrbitCamera:
        return cls.framing(trough.radius, trough.z_min, trough.z_max)

    @classmethod
    def top_view(cls, side: float, spacing: float) -> OrbitCamera:
        """Straight down onto the square [0, side]^2 at z = 0 (a 2D scene's box); zooms in until the
        view is two ``spacing`` high (the mean distance between particles)."""
        return cls.plan_view((0.0, 0.0, side, side), spacing)

    @classmethod
    def plan_view(cls, extent: tuple[float, float, float, float], smallest: float) -> OrbitCamera:
        """Straight down onto the rectangle ``extent`` (x0, y0, x1, y1) at z = 0, x to the right and y
        up, the rectangle filling 3/4 of the view's height (or width, when it is wider); zooms in until
        the view is two ``smallest`` high (particles apart, a field's cells) and out to a few extents."""
        x0, y0, x1, y1 = (float(v) for v in extent)
        half_tan = math.tan(math.radians(cls.fov_y) / 2)
        span = max(y1 - y0, (x1 - x0) / 1.6, 1e-9)  # a landscape view is about 1.6 times as wide
        distance = span / (1.5 * half_tan)
        return cls(
            target=np.array([0.5 * (x0 + x1), 0.5 * (y0 + y1), 0.0]),
            distance=distance,
            yaw=0.0,
            pitch=0.0,
            min_distance=min(smallest / half_tan, distance),
            max_distance=4.0 * distance,
            extent=span,
            orbit_enabled=False,
        )

    @classmethod
    def looking_at(cls, point, distance: float, yaw: float = 0.0, pitch: float = 0.0) -> OrbitCamera:
        return cls(target=np.asarray(point, dtype=np.float64), distance=distance, yaw=yaw, pitch=pitch)

    def copy(self) -> OrbitCamera:
        return replace(self, target=self.target.copy())

    # --- geometry --------------------------------------------------------------------
    @property
    def eye(self) -> np.ndarray:
        yaw, pitch = math.radians(self.yaw), math.radians(self.pitch)
        offset = np.array([math.cos(pitch) * math.sin(yaw), math.sin(pitch), math.cos(pitch) * math.cos(yaw)])
        return self.target + self.distance * offset

    @property
    def near(self) -> float:
        # Close to the target the near plane shrinks too, so zooming onto one ball keeps it whole.
        return min(max(self.distance * 0.002, 0.005), 1.0)

    @property
    def far(self) -> float:
        return self.distance + max(2000.0, self.extent)

    def view_matrix(self) -> np.ndarray:
        return look_at(self.eye, self.target)

    def projection_matrix(self, aspect: float, shift_x: float = 0.0) -> np.ndarray:
        """``shift_x`` moves the image left by that much of normalised device x (lens shift), to
        centre the view in the part of the window the panel leaves free."""
        m = perspective(self.fov_y, max(aspect, 1e-6), self.near, self.far)
        m[0, 2] = shift_x
        return m

    def ray(self, ndc_x: float, ndc_y: float, aspect: float, shift_x: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
        """The world ray (origin, unit direction) through a point of normalised device coordinates,
        for the projection ``projection_matrix(aspect, shift_x)`` draws with."""
        inverse = np.linalg.inv(self.projection_matrix(aspect, shift_x) @ self.view_matrix())
        near = inverse @ np.array([ndc_x, ndc_y, -1.0, 1.0])
        far = inverse @ np.array([ndc_x, ndc_y, 1.0, 1.0])
        near, far = near[:3] / near[3], far[:3] / far[3]
        direction = far - near
        return near, direction / np.linalg.norm(direction)

    # --- interaction (pixel deltas from mouse drags) ------------------------------------
    def orbit(self, dx: float, dy: float) -> None:
        if not self.orbit_enabled:
            return
        self.yaw = (self.yaw - 0.3 * dx) % 360.0
        self.pitch = min(max(self.pitch - 0.3 * dy, -89.0), 89.0)

    def zoom(self, factor: float) -> None:
        """Multiply the distance by ``factor`` (< 1 moves closer)."""
        if math.isfinite(factor) and factor > 0:
            self.distance = min(max(self.distance * factor, self.min_distance), self.max_distance)

    def pan(self, dx: float, dy: float, viewport_height: float) -> None:
        """Move the target so that the scene follows the pointer."""
        view = self.view_matrix()
        right, up = view[0, :3], view[1, :3]
        view_height = 2.0 * self.distance * math.tan(math.radians(self.fov_y) / 2)
        world_per_pixel = view_height / max(viewport_height, 1)
        self.target = self.target - (dx * right + dy * up) * world_per_pixel
