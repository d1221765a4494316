/* Communicators whose global identity the definition tree must get right, at any size (the test
 * runs 5 ranks: the merge tree is not a full binary tree). Every rank prints one line per
 * collective call it made, in call order, with the world ranks of the communicator in
 * communicator rank order:
 *   call RANK SEQ LABEL OPERATION local=R,R,... [remote=R,R,...]
 * check_unify_mpi.py matches the archive's collective events against these lines. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int world_rank, world_size, seq;

static void members(MPI_Comm comm, int remote, char* out, size_t size) {
  MPI_Group group, world;
  int n = 0;
  if (remote)
    MPI_Comm_remote_group(comm, &group);
  else
    MPI_Comm_group(comm, &group);
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  MPI_Group_size(group, &n);
  int* in = malloc(sizeof(int) * (size_t)n);
  int* ranks = malloc(sizeof(int) * (size_t)n);
  for (int i = 0; i < n; ++i)
    in[i] = i;
  MPI_Group_translate_ranks(group, n, in, world, ranks);
  size_t used = 0;
  out[0] = '\0';
  for (int i = 0; i < n && used < size; ++i)
    used += (size_t)snprintf(out + used, size - used, i ? ",%d" : "%d", ranks[i]);
  free(in);
  free(ranks);
  MPI_Group_free(&group);
  MPI_Group_free(&world);
}

static void call(MPI_Comm comm, const char* label, int allreduce) {
  int inter = 0;
  MPI_Comm_test_inter(comm, &inter);
  if (allreduce) {
    int one = 1, sum = 0;
    MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, comm);
  } else {
    MPI_Barrier(comm);
  }
  char local[256], remote[256] = "";
  members(comm, 0, local, sizeof local);
  if (inter) members(comm, 1, remote, sizeof remote);
  printf("call %d %d %s %s local=%s%s%s\n", world_rank, seq++, label,
         allreduce ? "ALLREDUCE" : "BARRIER", local, inter ? " remote=" : "", remote);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world_size);
  call(MPI_COMM_WORLD, "world", 0);
  /* Two duplicates: the same member list, two communicators (told apart by their order). */
  MPI_Comm dup_a, dup_b;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup_a);
  MPI_Comm_dup(MPI_COMM_WORLD, &dup_b);
  call(dup_b, "dup_b", 1); /* used in the opposite order of creation */
  call(dup_a, "dup_a", 1);
  /* Even and odd ranks, in reverse rank order. */
  MPI_Comm parity;
  MPI_Comm_split(MPI_COMM_WORLD, world_rank % 2, world_size - world_rank, &parity);
  call(parity, "parity", 1);
  /* A subset: ranks 0 and 1 only; the others get MPI_COMM_NULL and register nothing. */
  MPI_Comm low;
  MPI_Comm_split(MPI_COMM_WORLD, world_rank < 2 ? 0 : MPI_UNDEFINED, 0, &low);
  if (low != MPI_COMM_NULL) call(low, "low", 0);
  /* An intercommunicator between the even and the odd ranks (leaders: the highest of each). */
  const int top_even = (world_size - 1) / 2 * 2, top_odd = world_size / 2 * 2 - 1;
  MPI_Comm inter;
  MPI_Intercomm_create(parity, 0, MPI_COMM_WORLD, world_rank % 2 ? top_even : top_odd, 7, &inter);
  call(inter, "inter", 0);
  /* A duplicate of each parity communicator: the same lists as parity, a later occurrence. */
  MPI_Comm parity_dup;
  MPI_Comm_dup(parity, &parity_dup);
  call(parity_dup, "parity_dup", 0);
  MPI_Comm_free(&parity_dup);
  MPI_Comm_free(&inter);
  if (low != MPI_COMM_NULL) MPI_Comm_free(&low);
  MPI_Comm_free(&parity);
  MPI_Comm_free(&dup_b);
  MPI_Comm_free(&dup_a);
  fflush(stdout);
  MPI_Finalize();
  return 0;
}
