#pragma once
#include <cstdint>

#include "topology.h"
namespace zipper::coll {
/// Alltoallv for small blocks with n concurrent inter-cluster senders
/// (1 <= n <= min(x, y)), same arguments as alltoallv_direct. Local rank i
/// hands its remote-bound blocks to aggregator i mod n (native alltoallv);
/// aggregator j sends them all in one message to the far cluster's
/// aggregator j through zipperd and receives that one's in return; each
/// aggregator then deals the received blocks out to their destinations
/// (native alltoallv). Per direction that is n large transfers instead of
/// x*y small ones. Sizes need no extra inter-cluster messages: each cluster
/// shares its own send and receive counts natively (skipped when `uniform`,
/// i.e. MMPI_Alltoall, where every rank knows them).
/// segment_bytes > 0 sends the inter-cluster step as messages of at most
/// that size (chunking, Vadhiyar et al. §3); 0 = one message.
/// Algorithm: ours, after the thesis's finding that the 4-byte alltoall
/// drowned in per-message handshakes.
int alltoallv_aggregated(const Topology& t, const void* sendbuf, const int* sendcounts,
                         const int* sdispls, MPI_Datatype sendtype, void* recvbuf,
                         const int* recvcounts, const int* rdispls, MPI_Datatype recvtype, int n,
                         bool uniform, std::uint64_t segment_bytes = 0);
}  // namespace zipper::coll
