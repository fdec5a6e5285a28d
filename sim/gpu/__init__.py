"""The GPU layer: NVRTC builds and their cache, launches, the device's peaks, measurement and the
speed-of-light models."""
