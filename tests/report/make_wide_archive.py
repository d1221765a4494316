"""Writes an OTF2 archive of many ranks with OTF2's writer (usage: make_wide_archive.py DIR RANKS
[ITERATIONS]): the shape of a large run at a size a test writes in seconds. Each rank, one CPU
location, runs `main` with ITERATIONS of compute, an MPI_Send to its right neighbour and an MPI_Recv
from its left one (a ring), then an MPI_Allreduce over MPI_COMM_WORLD. Compute takes 10 us plus
rank % 97 ns, except rank 7, which computes 40 us longer in every iteration: the slowest rank, for
the report's extremes."""
import sys

import otf2
from otf2.enums import CollectiveOp, GroupType, LocationGroupType, LocationType, Paradigm, RegionRole

STEP = 100_000  # ns per iteration, enough for the slowest rank


def write(path, ranks, iterations):
    # Small chunks (OTF2's least): each location holds an event and a definition chunk, and closing
    # a location's 4 MB default definition chunk takes ~50 ms (minutes at 2048 locations).
    with otf2.writer.open(path, timer_resolution=1_000_000_000, chunk_size_events=256 * 1024,
                          chunk_size_definitions=256 * 1024) as trace:
        d = trace.definitions
        node = d.system_tree_node("node", class_name="node")
        groups = [d.location_group("rank %d" % r, location_group_type=LocationGroupType.PROCESS,
                                   system_tree_parent=node) for r in range(ranks)]
        locations = [d.location("master %d" % r, type=LocationType.CPU_THREAD, group=groups[r]) for r in range(ranks)]
        d.group("MPI_COMM_WORLD locations", group_type=GroupType.COMM_LOCATIONS, paradigm=Paradigm.MPI,
                members=locations)
        world = d.comm("MPI_COMM_WORLD", group=d.group("MPI_COMM_WORLD ranks", group_type=GroupType.COMM_GROUP,
                                                        paradigm=Paradigm.MPI, members=list(range(ranks))))
        region = lambda name, role, paradigm: d.region(name, region_role=role, paradigm=paradigm)  # noqa: E731
        main = region("main", RegionRole.FUNCTION, Paradigm.USER)
        compute = region("compute", RegionRole.FUNCTION, Paradigm.USER)
        send = region("MPI_Send", RegionRole.POINT2POINT, Paradigm.MPI)
        recv = region("MPI_Recv", RegionRole.POINT2POINT, Paradigm.MPI)
        allreduce = region("MPI_Allreduce", RegionRole.COLL_ALL2ALL, Paradigm.MPI)
        end = (iterations + 1) * STEP
        for r in range(ranks):
            w = trace.event_writer_from_location(locations[r])
            w.enter(0, main)
            for i in range(iterations):
                t = i * STEP
                work = 10_000 + r % 97 + (40_000 if r == 7 else 0)
                w.enter(t + 100, compute)
                w.leave(t + 100 + work, compute)
                w.enter(t + 60_000 + 100, send)
                w.mpi_send(t + 60_000 + 200, (r + 1) % ranks, world, 0, 1024)
                w.leave(t + 60_000 + 300, send)
                w.enter(t + 60_000 + 400, recv)
                w.mpi_recv(t + 60_000 + 2_000, (r - 1) % ranks, world, 0, 1024)
                w.leave(t + 60_000 + 2_100, recv)
            w.enter(end - 9_000 + r % 1000, allreduce)
            w.mpi_collective_begin(end - 8_990 + r % 1000)
            w.mpi_collective_end(end - 500, CollectiveOp.ALLREDUCE, world, 0xFFFFFFFF, 8, 8)  # rootless
            w.leave(end - 400, allreduce)
            w.leave(end, main)


if __name__ == "__main__":
    write(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]) if len(sys.argv) > 3 else 2)
