#!/usr/bin/env bash
# The installable package as a user gets it: build the wheel, install it into a fresh virtual
# environment outside the repository, and train two steps from a scratch project that has its
# own data/, layers/ and train/ packages (the names the benchmark uses). Exit status 0 on
# success; any failure stops the script with torch's or pip's message.
#   bash scripts/check_wheel.sh              (PYTHON=... selects the interpreter that has torch)
# Quick (under a minute) and offline where the interpreter has setuptools >= 64: the wheel is
# built with it, and the fresh environment sees torch through a .pth file naming that
# interpreter's site-packages instead of downloading torch again.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
[ -n "${PYTHON:-}" ] || { PYTHON=$ROOT/.venv/bin/python; [ -x "$PYTHON" ] || PYTHON=python3; }
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

# built from a copy of what the wheel needs, so that setuptools' build/ and *.egg-info stay
# out of the checkout
mkdir -p "$WORK/src/docs"
cp -r "$ROOT/pyproject.toml" "$ROOT/LICENSE" "$ROOT/autogcn" "$WORK/src/"
cp "$ROOT/docs/layer.md" "$WORK/src/docs/"
find "$WORK/src/autogcn" -name __pycache__ -prune -exec rm -rf {} +
# the interpreter's own setuptools when it has one recent enough (offline); else pip fetches one
isolation=
if "$PYTHON" -c "import setuptools, sys; sys.exit(int(setuptools.__version__.split('.')[0]) < 64)" \
        2>/dev/null; then
    isolation=--no-build-isolation
fi
"$PYTHON" -m pip wheel "$WORK/src" --no-deps $isolation --quiet -w "$WORK/dist"
WHEEL=$(ls "$WORK"/dist/autogcn-*.whl)
echo "built $(basename "$WHEEL")"

"$PYTHON" -m venv --without-pip "$WORK/venv"
VENV_PY=$WORK/venv/bin/python
"$VENV_PY" -c "import site; print(site.getsitepackages()[0])" > "$WORK/site"
"$PYTHON" -c "import os, torch; print(os.path.dirname(os.path.dirname(torch.__file__)))" \
    > "$(cat "$WORK/site")/torch_from_host.pth"
"$PYTHON" -m pip --python "$VENV_PY" install --no-deps --no-index --quiet "$WHEEL"

# a user's project whose package names clash with the benchmark's
PROJECT=$WORK/project
for pkg in data layers train; do
    mkdir -p "$PROJECT/$pkg"
    echo "OWNER = 'the user project'" > "$PROJECT/$pkg/__init__.py"
done
printf 'class Graph:  # the user project\x27s own\n    pass\n' > "$PROJECT/data/graph.py"
cat > "$PROJECT/train/two_steps.py" <<'EOF'
import sys
from importlib.metadata import files, metadata
from pathlib import Path

import torch

import autogcn
import data.graph
import layers
from autogcn import AutoGCNConv, BernNetProp, ChebNetIIProp, GPRGNNProp, JacobiConvProp

assert "site-packages" in autogcn.__file__, autogcn.__file__  # the installed copy
# the wheel held the package autogcn and nothing of the benchmark, and the MIT licence, both as
# a file and in its metadata
installed = files("autogcn")
stray = {f.parts[0] for f in installed} - {"autogcn"}
assert all(t.endswith(".dist-info") for t in stray), f"the wheel holds more than autogcn: {stray}"
licences = [f for f in installed if f.name == "LICENSE" and ".dist-info" in str(f)]
assert len(licences) == 1, f"the wheel holds {len(licences)} LICENSE files, not one"
licence = licences[0]
assert licence.read_text() == Path(sys.argv[1]).read_text(), "the wheel's LICENSE differs"
assert metadata("autogcn")["License-Expression"] == "MIT", "no MIT licence in its metadata"
print(f"licence: {licence}, License-Expression: MIT")
assert data.graph.Graph.__module__ == "data.graph" and layers.OWNER == "the user project"
torch.manual_seed(0)
edge_index = torch.tensor([[0, 1, 1, 2, 2, 3], [1, 0, 2, 1, 3, 2]])
x, y = torch.randn(4, 8), torch.tensor([0, 1, 1, 0])
model = torch.nn.ModuleList([AutoGCNConv(8, 2), GPRGNNProp(K=2), BernNetProp(K=2),
                             ChebNetIIProp(K=2), JacobiConvProp(2, K=2)])
optimizer = torch.optim.Adam(model.parameters(), lr=0.05)
losses = []
for _ in range(2):
    optimizer.zero_grad()
    h = model[0](x, edge_index)
    for prop in model[1:]:
        h = prop(h, edge_index)
    loss = torch.nn.functional.cross_entropy(h, y)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
assert all(torch.isfinite(torch.tensor(losses))), losses
print(f"trained two steps from {autogcn.__file__}: losses {losses[0]:.4f}, {losses[1]:.4f}")
EOF
cd "$PROJECT"
"$VENV_PY" -m train.two_steps "$ROOT/LICENSE"
