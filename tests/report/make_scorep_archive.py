#!/usr/bin/python3
"""Writes a small OTF2 archive in Score-P's layout with OTF2's writer (usage: make_scorep_archive.py
DIR) modelled on what Score-P writes for a 2-rank MPI+CUDA run with PAPI counters and sampling (the
record kinds, roles, paradigms and layout, not a byte-for-byte Score-P trace), at a size a test
reads in a second.

  system tree   machine "Linux" > node "node01" > accelerator device "CUDA device 0"
  processes     "MPI Rank 0", "MPI Rank 1" (location groups of type PROCESS), each with a
                "Master thread" CPU location; rank 0 also with a POSIX thread it creates
                (ThreadCreate/Begin/End/Wait on a PTHREAD communicator)
  accelerator   location group "CUDA context 0" (type ACCELERATOR, created by rank 0, in the
                device's node) with the stream location "CUDA[0:13]"
  regions       Score-P's roles and paradigms: main (COMPILER), MPI_Send/MPI_Recv/MPI_Isend/
                MPI_Irecv/MPI_Wait (POINT2POINT), MPI_Allreduce (COLL_ALL2ALL), cudaMemcpy
                (DATA_TRANSFER, CUDA), the kernel vecAdd (FUNCTION, CUDA) on the stream
  metrics       PAPI_TOT_CYC (uint64, strictly synchronous, CPU recorder) before every Enter and
                Leave of the CPU threads; on the stream, asynchronous GPU power (double, W),
                temperature (int64, 10^-3 C) and energy (double, 10^-3 J) of one metric class and
                memory in use (uint64, 2^10 B) through a metric instance whose scope is the
                accelerator location group; the stream is the sensor class's recorder
  MPI           COMM_LOCATIONS + COMM_GROUP (ranks) communicators, an MPI_Send/MPI_Recv, an
                MPI_Isend/MPI_Irecv pair with their request records, an MPI_Allreduce
  CUDA memcpy   an RMA window over the CUDA communicator: RmaPut + RmaOpCompleteBlocking
  sampling      an interrupt generator, source code location, calling context, a few
                CallingContextSample records on rank 0 and a CallingContextEnter/Leave pair on
                rank 1 (Score-P writes these instead of Enter/Leave when it unwinds; OTF2 calls the
                two kinds exclusive within a trace, but its library takes both, and one small
                archive tests both)
  attributes    a "CUDA_STREAM" attribute on the kernel's Enter; an MPI parameter (ParameterInt)
The timer runs at 2 GHz (Score-P's TSC-like clocks are not 1 GHz)."""
import sys

import otf2
from otf2.enums import (Base, GroupType, InterruptGeneratorMode, LocationGroupType, LocationType,
                        MetricMode, MetricOccurrence, MetricType, Paradigm, ParameterType, RecorderKind, RegionRole,
                        Type, CollectiveOp)

RESOLUTION = 2_000_000_000
OFFSET = 5_000_000_000


def write(path):
    with otf2.writer.open(path, timer_resolution=RESOLUTION) as trace:
        d = trace.definitions
        machine = d.system_tree_node("Linux", class_name="machine")
        node = d.system_tree_node("node01", class_name="node", parent=machine)
        device = d.system_tree_node("CUDA device 0", class_name="accelerator device", parent=node)
        ranks = [d.location_group("MPI Rank %d" % r, location_group_type=LocationGroupType.PROCESS,
                                  system_tree_parent=node) for r in range(2)]
        threads = [d.location("Master thread", type=LocationType.CPU_THREAD, group=ranks[r]) for r in range(2)]
        pthread = d.location("Pthread thread 1", type=LocationType.CPU_THREAD, group=ranks[0])
        context = d.location_group("CUDA context 0", location_group_type=LocationGroupType.ACCELERATOR,
                                   system_tree_parent=device, creating_location_group=ranks[0])
        stream = d.location("CUDA[0:13]", type=LocationType.ACCELERATOR_STREAM, group=context)

        d.group("MPI_COMM_WORLD locations", group_type=GroupType.COMM_LOCATIONS,
                paradigm=Paradigm.MPI, members=threads)
        world = d.comm("MPI_COMM_WORLD", group=d.group("MPI_COMM_WORLD ranks", group_type=GroupType.COMM_GROUP,
                                                        paradigm=Paradigm.MPI, members=[0, 1]))
        d.group("MPI_COMM_SELF", group_type=GroupType.COMM_SELF, paradigm=Paradigm.MPI, members=[])
        d.group("CUDA locations", group_type=GroupType.COMM_LOCATIONS, paradigm=Paradigm.CUDA,
                members=[threads[0], stream])
        cuda_comm = d.comm("CUDA_COMM", group=d.group("CUDA ranks", group_type=GroupType.COMM_GROUP,
                                                      paradigm=Paradigm.CUDA, members=[0, 1]))
        window = d.rma_win("CUDA_WINDOW", comm=cuda_comm)
        d.group("Pthread locations", group_type=GroupType.COMM_LOCATIONS, paradigm=Paradigm.PTHREAD,
                members=[threads[0], pthread])
        pthreads = d.comm("PTHREAD_THREAD_TEAM", group=d.group("Pthread ranks", group_type=GroupType.COMM_GROUP,
                                                               paradigm=Paradigm.PTHREAD, members=[0, 1]))

        def region(name, role, paradigm):
            return d.region(name, region_role=role, paradigm=paradigm)
        main = region("main", RegionRole.FUNCTION, Paradigm.COMPILER)
        send = region("MPI_Send", RegionRole.POINT2POINT, Paradigm.MPI)
        recv = region("MPI_Recv", RegionRole.POINT2POINT, Paradigm.MPI)
        isend = region("MPI_Isend", RegionRole.POINT2POINT, Paradigm.MPI)
        irecv = region("MPI_Irecv", RegionRole.POINT2POINT, Paradigm.MPI)
        wait = region("MPI_Wait", RegionRole.POINT2POINT, Paradigm.MPI)
        allreduce = region("MPI_Allreduce", RegionRole.COLL_ALL2ALL, Paradigm.MPI)
        memcpy = region("cudaMemcpy", RegionRole.DATA_TRANSFER, Paradigm.CUDA)
        kernel = region("vecAdd", RegionRole.FUNCTION, Paradigm.CUDA)
        worker = region("worker", RegionRole.FUNCTION, Paradigm.COMPILER)

        cycles = d.metric_member("PAPI_TOT_CYC", "Total cycles", metric_type=MetricType.PAPI,
                                 metric_mode=MetricMode.ACCUMULATED_START, value_type=Type.UINT64,
                                 base=Base.DECIMAL, exponent=0, unit="#")
        papi = d.metric_class([cycles], occurrence=MetricOccurrence.SYNCHRONOUS_STRICT,
                              recorder_kind=RecorderKind.CPU)
        power = d.metric_member("gpu_power", "GPU board power", metric_type=MetricType.OTHER,
                                metric_mode=MetricMode.ABSOLUTE_POINT, value_type=Type.DOUBLE,
                                base=Base.DECIMAL, exponent=0, unit="W")
        temperature = d.metric_member("gpu_temperature", "GPU temperature", metric_type=MetricType.OTHER,
                                      metric_mode=MetricMode.ABSOLUTE_POINT, value_type=Type.INT64,
                                      base=Base.DECIMAL, exponent=-3, unit="C")
        energy = d.metric_member("gpu_energy", "GPU energy since start", metric_type=MetricType.OTHER,
                                 metric_mode=MetricMode.ACCUMULATED_START, value_type=Type.DOUBLE,
                                 base=Base.DECIMAL, exponent=-3, unit="J")
        gpu_sensors = d.metric_class([power, temperature, energy], occurrence=MetricOccurrence.ASYNCHRONOUS,
                                     recorder_kind=RecorderKind.ABSTRACT)
        d.metric_class_recorder(gpu_sensors, stream)
        memory = d.metric_member("gpu_memory_used", "device memory in use", metric_type=MetricType.OTHER,
                                 metric_mode=MetricMode.ABSOLUTE_POINT, value_type=Type.UINT64,
                                 base=Base.BINARY, exponent=10, unit="B")
        memory_class = d.metric_class([memory], occurrence=MetricOccurrence.ASYNCHRONOUS,
                                      recorder_kind=RecorderKind.GPU)
        memory_of_context = d.metric_instance(memory_class, stream, scope=context)

        sampler = d.interrupt_generator("CPU_TIME", interrupt_generator_mode=InterruptGeneratorMode.TIME,
                                        base=Base.DECIMAL, exponent=-9, period=1_000_000)
        source = d.source_code_location("vecadd.cu", line_number=42)
        context_main = d.calling_context(main, source_code_location=source, parent=None)
        stream_attribute = d.attribute("CUDA_STREAM", "the kernel's stream", Type.UINT32)
        comm_size = d.parameter("MPI communicator size", parameter_type=ParameterType.INT64)

        T = lambda ns: OFFSET + 2 * ns  # noqa: E731  (2 ticks per ns)
        cpu = [trace.event_writer_from_location(t) for t in threads]
        gpu = trace.event_writer_from_location(stream)
        counter = [1000, 5000]

        def enter(r, ns, reg):
            counter[r] += 1234 + 17 * ns % 97
            cpu[r].metric(T(ns), papi, [counter[r]])
            cpu[r].enter(T(ns), reg)

        def leave(r, ns, reg):
            counter[r] += 4321 + 13 * ns % 89
            cpu[r].metric(T(ns), papi, [counter[r]])
            cpu[r].leave(T(ns), reg)

        for r in range(2):
            enter(r, 0, main)
            cpu[r].parameter_int(T(1), comm_size, 2)
        # A POSIX thread of rank 0, created and joined.
        cpu[0].thread_create(T(20), pthreads, 1)
        worker_events = trace.event_writer_from_location(pthread)
        worker_events.thread_begin(T(30), pthreads, 1)
        worker_events.enter(T(35), worker)
        worker_events.leave(T(55), worker)
        worker_events.thread_end(T(60), pthreads, 1)
        cpu[0].thread_wait(T(70), pthreads, 1)
        # MPI_Send 0 -> 1, MPI_Recv on 1
        enter(0, 100, send)
        cpu[0].mpi_send(T(110), 1, world, 7, 4096)
        leave(0, 150, send)
        enter(1, 90, recv)
        cpu[1].mpi_recv(T(200), 0, world, 7, 4096)
        leave(1, 210, recv)
        # MPI_Isend 1 -> 0, MPI_Irecv/MPI_Wait on 0
        enter(0, 300, irecv)
        cpu[0].mpi_irecv_request(T(305), 11)
        leave(0, 310, irecv)
        enter(1, 320, isend)
        cpu[1].mpi_isend(T(325), 0, world, 9, 64, 21)
        leave(1, 330, isend)
        enter(1, 340, wait)
        cpu[1].mpi_isend_complete(T(345), 21)
        leave(1, 350, wait)
        enter(0, 400, wait)
        cpu[0].mpi_irecv(T(420), 1, world, 9, 64, 11)
        leave(0, 430, wait)
        # MPI_Allreduce on both ranks
        for r, (b, e) in enumerate(((500, 600), (520, 610))):
            enter(r, b, allreduce)
            cpu[r].mpi_collective_begin(T(b + 1))
            cpu[r].mpi_collective_end(T(e - 1), CollectiveOp.ALLREDUCE, world, 0xffffffff, 8, 8)
            leave(r, e, allreduce)
        # cudaMemcpy host -> device as Score-P records it: an RMA put on the CUDA window
        enter(0, 700, memcpy)
        cpu[0].rma_put(T(705), window, 1, 1 << 20, 1)
        cpu[0].rma_op_complete_blocking(T(790), window, 1)
        leave(0, 800, memcpy)
        # The kernel on the stream, with the GPU's asynchronous sensors around it.
        gpu.metric(T(650), gpu_sensors, [61.5, 45250, 1234.5])
        gpu.metric(T(660), memory_of_context, [3072])
        gpu.enter(T(820), kernel, attributes={stream_attribute: 13})
        gpu.metric(T(850), gpu_sensors, [187.25, 47125, 98765.4321])
        gpu.metric(T(860), memory_of_context, [1 << 40])
        gpu.leave(T(900), kernel)
        gpu.metric(T(950), gpu_sensors, [-0.5, -1500, 1e-300])
        # Samples on rank 0 (an interrupt every ms of CPU time), and an unwound region on rank 1.
        for ns in (850, 900, 950):
            cpu[0].calling_context_sample(T(ns), context_main, 1, sampler)
        cpu[1].calling_context_enter(T(700), context_main, 1)
        cpu[1].calling_context_leave(T(750), context_main)
        for r in range(2):
            leave(r, 1000, main)


if __name__ == "__main__":
    write(sys.argv[1])
