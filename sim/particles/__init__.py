"""2D short-range repulsion with O(n) binning (spec: particles.md, CS 267 Homework 2)."""
