"""3D falling balls with z-sorted proximity pairs (spec: balls.md)."""
