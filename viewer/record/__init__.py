"""Recording the view to an MP4 (H.264) through PyAV: the encoder (video.py), the asynchronous GL
read-back through a ring of pixel buffer objects (readback.py) and the recorder that joins them to
a clock (recorder.py): real time, or one video frame per K physics steps."""
