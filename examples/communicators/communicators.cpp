// communicators: creates derived communicators in every way MPI offers (dup, split, split_type,
// create, create_group, intercomm_create/merge, cart_create), exchanges messages and runs
// collectives on each, and frees them. Messages on a derived communicator carry, as tag, the
// sender's WORLD rank, so a trace reader can check that communicator ranks resolve to the right
// world ranks: for every message on a derived communicator, tag == world rank of the sender.
//
// usage: communicators            (needs an even number of ranks, 2 or 4)
#include <cstdio>
#include <cstdlib>
#include <mpi.h>
#include <vector>

namespace {

int world_rank = 0;
int world_size = 0;
long messages = 0;

void expect(bool condition, const char* what) {
  if (!condition) {
    std::fprintf(stderr, "communicators: rank %d: check failed: %s\n", world_rank, what);
    MPI_Abort(MPI_COMM_WORLD, 3);
  }
}

// A ring exchange on `comm` tagged with the sender's world rank, then an allreduce and a barrier.
// Checks that the message came from the expected world rank.
void exercise(MPI_Comm comm, const char* what) {
  int rank = 0, size = 0;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  if (size > 1) {
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int sent_from = world_rank, got_from = -1;
    MPI_Status status;
    MPI_Sendrecv(&sent_from, 1, MPI_INT, right, world_rank, &got_from, 1, MPI_INT, left,
                 MPI_ANY_TAG, comm, &status);
    expect(status.MPI_TAG == got_from, what);
    messages++;
  }
  int one = 1, members = 0;
  MPI_Allreduce(&one, &members, 1, MPI_INT, MPI_SUM, comm);
  expect(members == size, what);
  MPI_Barrier(comm);
}

} // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world_size);
  if (world_size % 2 != 0) {
    if (world_rank == 0) std::fprintf(stderr, "communicators: needs an even number of ranks\n");
    MPI_Finalize();
    return 2;
  }

  MPI_Comm dup;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  exercise(dup, "dup");

  // Reversed order: communicator rank r is world rank size-1-r.
  MPI_Comm reversed;
  MPI_Comm_split(MPI_COMM_WORLD, 0, world_size - world_rank, &reversed);
  exercise(reversed, "split reversed");

  // Odd and even world ranks.
  MPI_Comm parity;
  MPI_Comm_split(MPI_COMM_WORLD, world_rank % 2, world_rank, &parity);
  exercise(parity, "split parity");

  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, world_rank, MPI_INFO_NULL, &node);
  exercise(node, "split_type");

  // The upper half of WORLD, through a group.
  MPI_Group world_group, upper_group;
  MPI_Comm_group(MPI_COMM_WORLD, &world_group);
  std::vector<int> upper;
  for (int r = world_size / 2; r < world_size; r++)
    upper.push_back(r);
  MPI_Group_incl(world_group, static_cast<int>(upper.size()), upper.data(), &upper_group);
  MPI_Comm created;
  MPI_Comm_create(MPI_COMM_WORLD, upper_group, &created);
  expect((created != MPI_COMM_NULL) == (world_rank >= world_size / 2), "create membership");
  if (created != MPI_COMM_NULL) exercise(created, "create");
  MPI_Comm created_group = MPI_COMM_NULL;
  if (world_rank >= world_size / 2) {
    MPI_Comm_create_group(MPI_COMM_WORLD, upper_group, 7, &created_group);
    exercise(created_group, "create_group");
  }

  // Intercommunicator between even and odd ranks; leaders are world ranks 0 and 1.
  MPI_Comm inter;
  MPI_Intercomm_create(parity, 0, MPI_COMM_WORLD, world_rank % 2 == 0 ? 1 : 0, 99, &inter);
  int remote_size = 0, inter_rank = 0;
  MPI_Comm_remote_size(inter, &remote_size);
  MPI_Comm_rank(inter, &inter_rank);
  expect(remote_size == world_size / 2, "intercomm remote size");
  // Each rank sends to the remote rank with the same local rank (the tag is its world rank).
  int got = -1;
  MPI_Sendrecv(&world_rank, 1, MPI_INT, inter_rank, world_rank, &got, 1, MPI_INT, inter_rank,
               MPI_ANY_TAG, inter, MPI_STATUS_IGNORE);
  expect(got == (world_rank % 2 == 0 ? world_rank + 1 : world_rank - 1), "intercomm message");
  messages++;
  int bcast_value = world_rank == 0 ? 5 : -1;
  // Intercommunicator broadcast from world rank 0 (local rank 0 of the even group).
  int root = world_rank % 2 == 0 ? (inter_rank == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
  MPI_Bcast(&bcast_value, 1, MPI_INT, root, inter);
  expect(world_rank % 2 == 0 || bcast_value == 5, "intercomm bcast");
  MPI_Comm merged;
  MPI_Intercomm_merge(inter, world_rank % 2, &merged);
  exercise(merged, "intercomm_merge");

  MPI_Comm cart;
  int dims[2] = {world_size / 2, 2}, periods[2] = {1, 0};
  MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 1, &cart);
  exercise(cart, "cart");

  // Free everything; then a communicator created afterwards may reuse handles.
  for (MPI_Comm* c : {&dup, &reversed, &node, &inter, &merged, &cart})
    MPI_Comm_free(c);
  if (created != MPI_COMM_NULL) MPI_Comm_free(&created);
  if (created_group != MPI_COMM_NULL) MPI_Comm_free(&created_group);
  MPI_Group_free(&upper_group);
  MPI_Group_free(&world_group);
  MPI_Comm again;
  MPI_Comm_split(MPI_COMM_WORLD, 0, world_rank, &again);
  exercise(again, "after free");
  MPI_Comm_free(&again);
  MPI_Comm_free(&parity);

  long total = 0;
  MPI_Reduce(&messages, &total, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  if (world_rank == 0) std::printf("communicators: ranks=%d messages=%ld OK\n", world_size, total);
  MPI_Finalize();
  return 0;
}
