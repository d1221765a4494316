// A parent world of 2 ranks spawns a child world of 1 and exchanges a message and a barrier with
// it over the intercommunicator; the parents also exchange a message inside their own world.
//
// usage: spawn_app [DIR]   with DIR, each process also writes its result line into
// DIR/parent-RANK or DIR/child-RANK (the test reads them there: a launcher need not pass on what
// a spawned process prints).
#include <mpi.h>
#include <stdio.h>

static void result(const char* dir, const char* role, int rank, const char* line) {
  fputs(line, stdout);
  if (dir == NULL) return;
  char path[4096];
  snprintf(path, sizeof path, "%s/%s-%d", dir, role, rank);
  FILE* f = fopen(path, "w");
  if (f == NULL) return; // the test finds the file missing
  fputs(line, f);
  fclose(f);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  char* dir = argc > 1 ? argv[1] : NULL;
  char* child_argv[] = {dir, NULL};
  MPI_Comm parent;
  MPI_Comm_get_parent(&parent);
  int rank = 0, value = 0;
  char line[64];
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (parent == MPI_COMM_NULL) {
    if (rank == 0) {
      value = 7;
      MPI_Send(&value, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
    } else {
      MPI_Recv(&value, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    MPI_Comm child;
    MPI_Comm_spawn(argv[0], dir ? child_argv : MPI_ARGV_NULL, 1, MPI_INFO_NULL, 0, MPI_COMM_WORLD,
                   &child, MPI_ERRCODES_IGNORE);
    if (rank == 0) {
      value = 42;
      MPI_Send(&value, 1, MPI_INT, 0, 1, child);
    }
    MPI_Barrier(child);
    MPI_Comm_disconnect(&child);
    snprintf(line, sizeof line, "parent %d: world message %d\n", rank, rank == 1 ? value : 7);
    result(dir, "parent", rank, line);
  } else {
    MPI_Recv(&value, 1, MPI_INT, 0, 1, parent, MPI_STATUS_IGNORE);
    MPI_Barrier(parent);
    MPI_Comm_disconnect(&parent);
    snprintf(line, sizeof line, "child %d: got %d\n", rank, value);
    result(dir, "child", rank, line);
  }
  MPI_Finalize();
  return 0;
}
