"""Spatial distance histogram: all N(N-1)/2 pair distances of N points (spec: sdh.md)."""
