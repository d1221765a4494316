"""Paths of what the build under test made. Tools linked with MPI carry the build's suffix
(HTRACE_MPI_SUFFIX, set by ctest: "" for Open MPI, "-mpich" for an MPICH-family build), so builds
for several MPIs can be installed side by side."""
import os

MPI_TOOLS = {"htrace-correct", "htrace-salvage", "htrace-clockcheck", "htrace-bench", "htrace-config"}


def tool(name):
    """The path of tool `name` (e.g. "htrace-correct") in the build tree HTRACE_BUILD_DIR."""
    suffix = os.environ.get("HTRACE_MPI_SUFFIX", "") if name in MPI_TOOLS else ""
    return os.path.join(os.environ["HTRACE_BUILD_DIR"], "tools", name, name + suffix)
