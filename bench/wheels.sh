# Sourced by bench/device.sh and bench/multigpu.sh on a GPU machine: the Python packages the product needs
# there beside the machine's own (the viewer's, platformdirs, tomli-w), carried as wheels in .whl/ and
# installed under /tmp/site once a machine; /tmp/site goes first on PYTHONPATH.
if ls .whl/*.whl > /dev/null 2>&1; then
  wanted=$(cd .whl && ls -- *.whl)
  if [ "$(cat /tmp/site/.wheels 2>/dev/null)" != "$wanted" ]; then
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
      && echo "$wanted" > /tmp/site/.wheels
  fi
  [ -f /tmp/site/.wheels ] && export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH}
fi
