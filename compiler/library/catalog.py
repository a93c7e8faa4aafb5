"""Every algorithm of the library, declared once: name, kinds, description, preconditions, phases.

Targets pick from `GENERIC` (every machine), `GRID` (tori and meshes) and `DIMENSIONAL` (tori,
meshes and hypercubes) by name (offer.py).
"""

from __future__ import annotations

from phalanx.compiler.algorithms import direct_columns, direct_phases
from phalanx.compiler.kind import Kind
from phalanx.compiler.library import (
    allreduce,
    bothways,
    checkerboard,
    collectedhalving,
    colouring,
    corner,
    crossedhalving,
    dimpipeline,
    eager,
    enginerounds,
    exchangesteps,
    fanscatter,
    farthest,
    farthestfirst,
    grid,
    gridexchange,
    group,
    groupedhalving,
    halvingfanin,
    halvingpostal,
    hilbert,
    index,
    interleaved,
    knomial,
    neighbourscatter,
    openshop,
    pairedring,
    pipelined2d,
    postaltree,
    radix,
    relayrounds,
    ringreduce,
    rings,
    rootcopy,
    rooted,
    scatterrings,
    spanning,
    splitties,
    stagger,
    streamrounds,
    subcubes,
    trees,
    turned,
    twotree,
    xorrelay,
)
from phalanx.compiler.library.registry import Algorithm
from phalanx.compiler.library.requirements import (
    complete_group,
    eight_pieces,
    every_member_receives,
    halvable,
    on_dimensions,
    on_grid,
    one_sender_or_receiver,
    partial_blocks,
    power_of_two_members,
    power_of_two_nodes,
    quarters,
    splittable,
    uniform_parts,
)
from phalanx.compiler.library.turned import several_streams
from phalanx.compiler.recognize import KINDS

ROOTED_OK = (one_sender_or_receiver,)
GROUP_OK = (complete_group, every_member_receives, uniform_parts)
# the crossed-, grouped- and collected-halving family: 2^a x 2^b tori whose nodes stream several
HALVING_GRID = (on_grid, several_streams, crossedhalving.power_of_two_grid)

GENERIC: tuple[Algorithm, ...] = (
    Algorithm("direct", KINDS, "pairwise steps: in step s node r sends to r XOR s (2^d nodes) "
              "or r + s mod P; the generic exchange, for a rooted kind the linear messages",
              lambda coll, machine: list(direct_phases(coll)),
              columns=lambda coll, machine: direct_columns(coll)),
    Algorithm("linear", (Kind.BROADCAST, Kind.SCATTER, Kind.GATHER, Kind.REDUCE),
              "the root talks to each node in turn, one message per phase", rooted.linear_phases,
              ROOTED_OK),
    Algorithm("linear", (Kind.ALLGATHER, Kind.ALLREDUCE),
              "everything to the first member, then the whole result from it to each member",
              group.gather_broadcast_phases, GROUP_OK),
    Algorithm("binomial", (Kind.BROADCAST, Kind.SCATTER, Kind.GATHER, Kind.REDUCE),
              "binomial tree, ceil(log2 P) rounds (on 2^d nodes along hypercube dimensions "
              "from the root: the e-cube spanning tree)", rooted.binomial_phases, ROOTED_OK),
    Algorithm("binomial", (Kind.ALLGATHER, Kind.ALLREDUCE),
              "up a binomial tree to the first member, then down it again",
              group.tree_phases, GROUP_OK),
    Algorithm("farthest-binomial", (Kind.BROADCAST, Kind.SCATTER),
              "MPICH's binomial tree: ceil(log2 P) rounds, the root's first message to the "
              "member P/2 ahead, each node's last child 1 ahead (`binomial` goes nearest first); "
              "a scatter's message carries the child's subtree",
              farthest.farthest_binomial_phases, ROOTED_OK),
    Algorithm("scatter-allgather", (Kind.BROADCAST,),
              "van de Geijn: the block in P pieces scattered down a binomial tree, then a ring "
              "allgather of the pieces", rooted.scatter_allgather_phases,
              ROOTED_OK + (splittable,)),
    Algorithm("scatter-doubling", (Kind.BROADCAST,),
              "MPICH's scatter_recursive_doubling_allgather: the block in P pieces scattered "
              "down a binomial tree, then recursive doubling, the largest swap between ranks "
              "differing in the lowest bit; 2^d members", rooted.scatter_doubling_phases,
              ROOTED_OK + (power_of_two_members, splittable)),
    Algorithm("cut-scatter-doubling", (Kind.BROADCAST,),
              "scatter-doubling cut short: the block in 2^k pieces scattered down a binomial tree "
              "over the first 2^k members, each piece down a binomial tree over the members with "
              "the same k low rank bits, then recursive doubling over those k bits; k of least "
              "closed-form cost (0: binomial, lg P: scatter-doubling); 2^d members",
              knomial.cut_scatter_doubling_phases, ROOTED_OK + (power_of_two_members, splittable)),
    Algorithm("chain", (Kind.BROADCAST, Kind.REDUCE),
              "pipelined chain root -> 1 -> 2 ...: a broadcast in sqrt((P-2) beta B / alpha) "
              "pieces, a reduce combining along the chain", rooted.chain_phases, ROOTED_OK),
    Algorithm("binary", (Kind.BROADCAST, Kind.REDUCE),
              "pipelined binary tree (Open MPI's segmented bintree): the block in segments down "
              "a heap binary tree, each node sending a segment to its two children in turn; a "
              "reduce combines its partials' segments on the way up; segments from the cost model",
              trees.binary_phases, ROOTED_OK),
    Algorithm("knomial", (Kind.REDUCE,),
              "k-nomial tree (MVAPICH's and Intel MPI's knomial): in each of ceil(log_k P) rounds "
              "every parent takes its k - 1 children's combined partials at once; k from the "
              "port model (2: the binomial tree, P: every partial straight to the root)",
              knomial.knomial_phases, ROOTED_OK),
    Algorithm("split-binary", (Kind.BROADCAST,),
              "split-binary tree (Open MPI's split_bintree): each half of the block pipelined down "
              "one of two binary trees, then members of the two trees swap halves",
              trees.split_binary_phases, ROOTED_OK + (halvable,)),
    Algorithm("two-tree", (Kind.BROADCAST,),
              "Sanders, Speck and Traff's two-tree broadcast: each half of the block pipelined "
              "down one of two binary trees in which no member is inside both, so every port "
              "carries the block about once", twotree.two_tree_phases, ROOTED_OK + (halvable,)),
    Algorithm("two-tree-copy-beside", (Kind.BROADCAST,),
              "the two-tree broadcast with the root's copy of its own block in pieces, one beside "
              "each of its sends, instead of whole after its last (where copying is slower than "
              "the wire, the whole copy ends after the others' forwarding)",
              rootcopy.copy_beside(twotree.two_tree_phases), ROOTED_OK + (halvable,)),
    Algorithm("gray-two-tree", (Kind.BROADCAST,),
              "two-tree-copy-beside on the members in Gray-code order (virtual rank v on rank "
              "v XOR v >> 1): on a hypercube no two messages of a slot share a link; 2^d members",
              rootcopy.in_gray_order(twotree.two_tree_phases),
              ROOTED_OK + (power_of_two_members, halvable)),
    Algorithm("dimension-pipeline", (Kind.BROADCAST,),
              "the block in n pieces over n + lg P - 1 rounds: in round t every member pairs "
              "with member XOR 2^(t mod lg P) and sends it the newest piece it lacks, the root "
              "a new piece each round; n of least closed-form cost; 2^d members",
              dimpipeline.dimension_pipeline_phases, ROOTED_OK + (power_of_two_members,)),
    Algorithm("reduce-scatter-gather", (Kind.REDUCE,),
              "Rabenseifner (MPICH's reduce_scatter_gather): partial blocks in P pieces, reduced "
              "by recursive halving (each member ends with one piece), then a binomial gather "
              "to the root; 2^d members, partials of at least P elements",
              rooted.reduce_scatter_gather_phases,
              ROOTED_OK + (power_of_two_members, partial_blocks)),
    Algorithm("cut-halving", (Kind.REDUCE,),
              "Rabenseifner's reduce with its halving cut short: recursive halving over the "
              "lowest k rank bits (partials in 2^k pieces), a binomial reduce of each piece over "
              "the other bits, a binomial gather of the 2^k pieces to the root; k of least "
              "closed-form cost (0: binomial, lg P: reduce-scatter-gather); 2^d members",
              knomial.cut_halving_phases, ROOTED_OK + (power_of_two_members, partial_blocks)),
    Algorithm("halving-direct", (Kind.REDUCE,),
              "cut-halving with a direct gather: recursive halving over the lowest k rank bits "
              "(partials in 2^k pieces), a binomial reduce of each piece over the other bits, "
              "then every piece straight to the root at once (one start-up where the binomial "
              "gather takes k); k of least closed-form cost; 2^d members",
              knomial.halving_direct_phases, ROOTED_OK + (power_of_two_members, partial_blocks)),
    Algorithm("two-tree", (Kind.REDUCE,),
              "Sanders, Speck and Traff's two-tree reduce: the two-tree broadcast backwards, each "
              "half of the partials reduced up one of the two trees in segments, every node "
              "merging its children's segments into its own before passing the sum on",
              twotree.two_tree_phases, ROOTED_OK + (partial_blocks,)),
    Algorithm("dimension-pipeline", (Kind.REDUCE,),
              "the dimension-pipeline broadcast backwards: the partials in n pieces, in each "
              "round's mirror every member sends its partner the sum of a piece over the "
              "members below it in that piece's tree; n of least closed-form cost; 2^d members",
              dimpipeline.dimension_pipeline_phases,
              ROOTED_OK + (power_of_two_members, partial_blocks)),
    Algorithm("halving-fan-in", (Kind.REDUCE,),
              "halving-direct with its binomial part in one phase: recursive halving over the "
              "lowest k rank bits (partials in 2^k pieces), every member's piece at once to its "
              "column's member with the other bits 0, then those 2^k pieces straight to the root "
              "(k + 2 start-ups); k of least closed-form cost; 2^d members",
              halvingfanin.halving_fan_in_phases, ROOTED_OK + (power_of_two_members, partial_blocks)),
    Algorithm("postal-tree", (Kind.REDUCE,),
              "the tree of least time when every member sends its combined partial once (Bar-Noy "
              "and Kipnis's postal broadcast tree backwards): a parent takes its children's "
              "partials one after another as each is ready, children ready early sending early, "
              "each given as many members as its deadline allows; any number of members",
              postaltree.postal_tree_phases, ROOTED_OK),
    Algorithm("halving-postal", (Kind.REDUCE,),
              "halving-fan-in with a postal tree for each column's fan-in: recursive halving "
              "over the lowest k rank bits (partials in 2^k pieces), each piece up its column's "
              "postal tree (children ready early sending early), then the 2^k column roots' "
              "pieces straight to the root; k of least closed-form cost; 2^d members",
              halvingpostal.halving_postal_phases, ROOTED_OK + (power_of_two_members, partial_blocks)),
    Algorithm("ring", (Kind.ALLGATHER,),
              "P - 1 steps round a ring, each passing on the part received last",
              group.ring_phases, GROUP_OK),
    Algorithm("ring", (Kind.ALLREDUCE,),
              "partials in P pieces: a reduce-scatter round a ring (P - 1 steps, each member "
              "passing on the piece it combined last), then an allgather of the reduced pieces "
              "round it (Patarasuk and Yuan; MPICH's ring); one-element partials go whole round "
              "the ring, P - 1 steps", allreduce.ring_phases, GROUP_OK),
    Algorithm("recursive-doubling", (Kind.ALLGATHER, Kind.ALLREDUCE),
              "log2 P exchanges with partner r XOR 2^k doubling what each holds (members past "
              "the largest power of two join through a partner)",
              group.recursive_doubling_phases, GROUP_OK),
    Algorithm("far-first-doubling", (Kind.ALLGATHER,),
              "recursive doubling with the rank bits reversed: the one-part first exchange "
              "between ranks P/2 apart, the half-of-the-parts last one between neighbours "
              "(keeps the large exchanges under a fat tree's first-stage switch); 2^d members",
              group.far_first_doubling_phases, GROUP_OK + (power_of_two_members,)),
    Algorithm("bruck", (Kind.ALLGATHER, Kind.ALLREDUCE),
              "Bruck's ceil(log2 P) steps for any P: in step k send what you hold to r - 2^k",
              group.bruck_phases, GROUP_OK),
    Algorithm("reduce-scatter-allgather", (Kind.ALLREDUCE,),
              "Rabenseifner (MPICH's reduce_scatter_allgather): partials in P pieces, reduced by "
              "recursive halving, lowest rank bit first (each member ends with one piece), then "
              "an allgather of the pieces by recursive doubling; 2^d members, partials of at "
              "least P elements",
              allreduce.rabenseifner_phases, GROUP_OK + (power_of_two_members, partial_blocks)),
    Algorithm("cut-halving", (Kind.ALLREDUCE,),
              "Rabenseifner's halving cut short: recursive halving over the lowest k rank bits "
              "(partials in 2^k pieces), recursive doubling of the piece each member then holds "
              "over the other bits, doubling back over the k bits; k of least closed-form cost "
              "(0: recursive doubling, lg P: reduce-scatter-allgather); 2^d members",
              allreduce.cut_halving_phases, GROUP_OK + (power_of_two_members, partial_blocks)),
    Algorithm("colouring", (Kind.CSHIFT, Kind.PERMUTATION, Kind.SPARSE),
              "every message as early as the ports allow: one phase where no port sends or "
              "receives twice, else D phases of a bipartite edge colouring (König; D the most "
              "messages at one port), apart on their routes' links where the machine names them",
              colouring.colouring_phases),
    Algorithm("open-shop", (Kind.ALLTOALLV,),
              "uneven blocks in P - 1 phases of even sizes: each phase a perfect matching of "
              "senders to receivers whose largest block is least among the pairs left (open-shop "
              "scheduling, Gonzalez and Sahni 1976), smallest first, where direct's XOR steps "
              "each wait for their largest block", openshop.open_shop_phases,
              (openshop.every_pair,)),
    Algorithm("open-shop-barrier", (Kind.ALLTOALLV,),
              "open-shop's phases with a barrier after each: no node runs ahead into the phase "
              "before's messages, where a phase's pairs are not XOR pairs (the hypercube's "
              "barrier is worth it for blocks of about 1 MB)", openshop.open_shop_barrier_phases,
              (openshop.every_pair,)),
    Algorithm("staggered", (Kind.CSHIFT, Kind.PERMUTATION),
              "one message per node at once, each starting its adapter's round robin over the "
              "pair's routes on a different route (a lead-in of a few packets first), chosen so "
              "that no two messages hold one link in one slot (the SP2's multi-route adapter)",
              stagger.staggered_phases, (stagger.multi_route_adapter, stagger.one_message_each)),
    Algorithm("staggered-halves", (Kind.CSHIFT, Kind.PERMUTATION),
              "staggered's lead-ins, then the rests in two phases (three for an odd cycle) in "
              "which no node both sends and receives, each phase's offsets such that no two of "
              "its messages hold one link in one slot (the SP2's multi-route adapter)",
              stagger.staggered_halves_phases, (stagger.multi_route_adapter, stagger.one_message_each)),
    Algorithm("relay-rounds", (Kind.PERMUTATION,),
              "whole blocks in the fewest rounds a greedy search finds (2 on hypercube:6, 4 on "
              "paragon:8x8) in which no link carries two messages and a node sends one and receives "
              "one (a shared engine: one of the two), each block direct or through one relay over "
              "two rounds (one-stream ports with fixed routes)",
              relayrounds.relay_rounds_phases, (relayrounds.relay_rounds,)),
    Algorithm("stream-rounds", (Kind.PERMUTATION,),
              "each block in pieces, each piece direct or through one relay (a shortest path or a "
              "2-hop detour), "
              "in the fewest rounds a min-conflicts search finds in which no link carries two "
              "pieces and no node's streams are oversubscribed (nodes that stream several "
              "messages at once: iWarp, the tori)",
              streamrounds.stream_rounds_phases, (streamrounds.stream_rounds,)),
    Algorithm("bruck", (Kind.ALLTOALL, Kind.ALLTOALLV, Kind.SPARSE),
              "Bruck et al. 1997's index algorithm for any P: ceil(log2 P) rounds, in round k "
              "each node sends the blocks whose distance has bit k set 2^k ahead (packed, "
              "forwarded; a sparse pattern's blocks only)", index.bruck_phases, columns=index.bruck_columns,
              messages=index.bruck_messages),
    Algorithm("radix-bruck", (Kind.ALLTOALL, Kind.ALLTOALLV, Kind.SPARSE),
              "Bruck et al. 1997's index algorithm in radix k for any P: per base-k digit of the "
              "distance and value m of it, a round sending the blocks with that digit m k^i "
              "ahead (on 2^d nodes and k = 2^a: to the node XOR m k^i, pairs swapping, the top "
              "t bits first as one digit where that saves packing: each of their rounds "
              "sends a run of the send buffer as it lies), packed and "
              "forwarded: (k - 1) log_k P rounds of about P/k blocks; k of least "
              "time by the rounds' closed form (2: bruck, P: direct)", radix.radix_bruck_phases,
              columns=radix.radix_bruck_columns, messages=radix.radix_bruck_messages),
)

GRID: tuple[Algorithm, ...] = (
    Algorithm("dim-ordered", (Kind.BROADCAST,),
              "binomial along the root's row, then down every column", grid.broadcast_phases,
              ROOTED_OK + (on_grid,)),
    Algorithm("spiral-chains", (Kind.BROADCAST,),
              "the block in four quarters, each pipelined along its own spiral through every "
              "node (east, west, north, south), so a node's four links carry at once",
              grid.spiral_chains_phases, ROOTED_OK + (on_grid, quarters)),
    Algorithm("interleaved-scatter-doubling", (Kind.BROADCAST,),
              "scatter-doubling with rank bits dealt to column and row bits in turn, lowest "
              "first, so the largest swaps are between neighbours and only the smallest cross "
              "the grid's longest distances (2^a x 2^b grids)",
              interleaved.interleaved_scatter_doubling_phases,
              ROOTED_OK + (on_grid, power_of_two_members, splittable)),
    Algorithm("interleaved-cut-scatter-doubling", (Kind.BROADCAST,),
              "cut-scatter-doubling over interleaved-scatter-doubling's order (rank bits dealt "
              "to column and row bits in turn), the pieces' binomial trees farthest bit first: "
              "the scatter and swaps between near nodes, each tree across the grid with few "
              "messages at once; k of least closed-form cost (2^a x 2^b grids)",
              interleaved.interleaved_cut_scatter_doubling_phases,
              ROOTED_OK + (on_grid, power_of_two_members, splittable)),
    Algorithm("eager-cut-halving", (Kind.ALLREDUCE,),
              "cut-halving in eager phases: a member starts its next round's message while its "
              "previous round's still streams (where a node streams several)",
              eager.eager(allreduce.cut_halving_phases),
              GROUP_OK + (on_grid, several_streams, power_of_two_members, partial_blocks)),
    Algorithm("eager-interleaved-cut-halving", (Kind.ALLREDUCE,),
              "eager-cut-halving over interleaved-scatter-doubling's order (the halving and "
              "doubling masks a column bit, then a row bit, in turn), so that the largest "
              "messages go between neighbours (2^a x 2^b tori whose nodes stream several)",
              eager.eager(interleaved.interleaved_cut_halving_phases),
              GROUP_OK + (on_grid, several_streams, power_of_two_members, partial_blocks)),
    Algorithm("eager-quad-cut-halving", (Kind.ALLREDUCE,),
              "eager-interleaved-cut-halving with its first halving step and last doubling "
              "step in radix 4: a member sends its row neighbour, its column neighbour and the "
              "diagonal one a quarter each, their wires together (2^a x 2^b tori whose nodes "
              "stream several)",
              eager.eager(interleaved.quad_cut_halving_phases),
              GROUP_OK + (on_grid, several_streams, power_of_two_members, partial_blocks)),
    Algorithm("eager-classed-quad-cut-halving", (Kind.ALLREDUCE,),
              "eager-quad-cut-halving on labels whose bits above the first pair nodes 2 apart, "
              "the quarters of even class (x + y) halving and doubling over a column bit then a "
              "row bit in turn, the others a row bit then a column bit, so that a row carries "
              "one class's pairs and a column the other's (2^a x 2^b tori whose nodes stream "
              "several)",
              eager.eager(interleaved.classed_quad_cut_halving_phases),
              GROUP_OK + (on_grid, several_streams, power_of_two_members, partial_blocks)),
    Algorithm("eager-halving-fan-in", (Kind.REDUCE,),
              "halving-fan-in in eager phases: a member starts its next round's message once "
              "its pieces of the round are in and merged, while its previous message may still "
              "stream (where a node streams several); k counts each fan-in's pieces coming in "
              "over the two links of the collector's row or column; the first round's message "
              "in two parts, the pieces its receiver passes on first; the collectors spread "
              "over the root's links (2^a x 2^b tori)",
              halvingfanin.eager_halving_fan_in_phases,
              ROOTED_OK + (on_grid, several_streams, power_of_two_members, partial_blocks)),
    Algorithm("eager-interleaved-cut-scatter-doubling", (Kind.BROADCAST,),
              "interleaved-cut-scatter-doubling in eager phases: a node starts its next phase's "
              "messages while its previous phase's still stream (where a node streams several)",
              eager.eager(interleaved.interleaved_cut_scatter_doubling_phases),
              ROOTED_OK + (on_grid, several_streams, power_of_two_members, splittable)),
    Algorithm("dim-ordered", (Kind.ALLGATHER, Kind.ALLREDUCE),
              "a ring in every row, then a ring in every column carrying whole rows",
              grid.gather_all_phases, GROUP_OK + (on_grid,)),
    Algorithm("dim-ordered", (Kind.SCATTER, Kind.GATHER, Kind.REDUCE),
              "along the root's row, one message per column carrying the column's blocks "
              "(nearest first, east and west in turn), then down every column (a gather or "
              "reduce: up the columns, then along the row, a reduce combining at each node of "
              "the root's row): rows + cols - 2 messages at the root",
              grid.scatter_phases, ROOTED_OK + (on_grid,)),
    Algorithm("turned-dim-ordered", (Kind.SCATTER, Kind.GATHER, Kind.REDUCE),
              "four dim-ordered scatters (gathers, reduces) at once, each of a quarter of every "
              "block on the grid turned about the root, a node starting the copies' messages in "
              "turn: the root's four links carry at once", turned.turned(grid.scatter_phases, True),
              turned.requirements(ROOTED_OK)),
    Algorithm("turned-two-tree", (Kind.BROADCAST,),
              "four two-tree broadcasts at once, each of a quarter of the block on the grid "
              "turned about the root (rotated by 0, 90, 180, 270 degrees on a square grid), so a "
              "node's messages of one slot leave on different links",
              turned.turned(twotree.two_tree_phases), turned.requirements(ROOTED_OK + (halvable,))),
    Algorithm("hilbert-two-tree", (Kind.BROADCAST,),
              "two-tree-copy-beside with the ranks along a Hilbert curve of the grid turned to "
              "start at the root, so that a subtree's routes stay inside its square (2^k x 2^k "
              "grids)", hilbert.hilbert_two_tree_phases,
              ROOTED_OK + (on_grid, hilbert.square_power_of_two_grid, halvable)),
    Algorithm("turned-scatter-doubling", (Kind.BROADCAST,),
              "four scatter-doubling broadcasts at once, each of a quarter of the block on the "
              "grid turned about the root", turned.turned(rooted.scatter_doubling_phases),
              turned.requirements(ROOTED_OK + (power_of_two_members, splittable))),
    Algorithm("turned-cut-scatter-doubling", (Kind.BROADCAST,),
              "four cut-scatter-doubling broadcasts at once, each of a quarter of the block on "
              "the grid turned about the root, each in interleaved-cut-scatter-doubling's order, "
              "so the pieces' scatter and swaps go between near nodes on four links; k of "
              "least closed-form cost for a quarter (2^a x 2^b grids)",
              turned.turned(interleaved.interleaved_cut_scatter_doubling_phases),
              turned.requirements(ROOTED_OK + (on_grid, power_of_two_members, splittable))),
    Algorithm("turned2-cut-scatter-doubling", (Kind.BROADCAST,),
              "turned-cut-scatter-doubling with two copies, the grid and its half turn, each of "
              "half the block: a phase costs a node two start-ups instead of four, which wins "
              "where a phase's start-ups outweigh its bytes (2^a x 2^b grids)",
              turned.turned(interleaved.interleaved_cut_scatter_doubling_phases, copies=2),
              turned.requirements(ROOTED_OK + (on_grid, power_of_two_members, splittable), 2)),
    Algorithm("turned-reduce-scatter-gather", (Kind.REDUCE,),
              "four Rabenseifner reduces at once, each of a quarter of the partials on the grid "
              "turned about the root", turned.turned(rooted.reduce_scatter_gather_phases),
              turned.requirements(ROOTED_OK + (power_of_two_members, partial_blocks))),
    Algorithm("turned-reduce-scatter-allgather", (Kind.ALLREDUCE,),
              "four Rabenseifner allreduces at once, each of a quarter of the partials on the "
              "grid turned about the first member", turned.turned(allreduce.rabenseifner_phases),
              turned.requirements(GROUP_OK + (power_of_two_members, partial_blocks))),
    Algorithm("spanning-trees", (Kind.BROADCAST,),
              "Johnsson and Ho's edge-disjoint spanning trees on a square torus: the block in "
              "four parts, each pipelined in segments down its own tree (one tree turned four "
              "times about the root), no link in two trees, so a node's four links carry at once",
              spanning.spanning_trees_phases,
              ROOTED_OK + (on_grid, spanning.square_grid, quarters)),
    Algorithm("spanning-trees", (Kind.REDUCE,),
              "the edge-disjoint spanning trees backwards: each quarter of the partials reduced "
              "up its own tree in segments, every node merging its subtree's before passing on",
              spanning.spanning_trees_phases,
              ROOTED_OK + (on_grid, spanning.square_grid, partial_blocks)),
    Algorithm("eager-spanning-trees", (Kind.BROADCAST,),
              "spanning-trees in eager phases, down shallower trees (one grown breadth first, "
              "turned four times): a node starts its next segment's four messages while the "
              "previous segment's still stream; segments from the pipeline's closed form",
              eager.eager_spanning_trees_phases,
              ROOTED_OK + (on_grid, spanning.square_grid, quarters, several_streams)),
    Algorithm("scatter-rings", (Kind.BROADCAST,),
              "the block scattered in 4 R C units by neighbour-scatter's regions (the root's four "
              "links at once), then round every column and every row by rings both ways at once "
              "(the bidirectional-rings reduce backwards), every phase eager",
              scatterrings.scatter_rings_phases,
              ROOTED_OK + (on_grid, neighbourscatter.four_neighbours, fanscatter.several_streams,
                           scatterrings.four_units_a_node)),
    Algorithm("fan-scatter-rings", (Kind.BROADCAST,),
              "scatter-rings with the units scattered down fan-scatter's tree (a holder's "
              "messages largest subtree first, along a Hilbert curve) to half the rows, which "
              "own units of twice the bytes, and the columns by recursive doubling, farthest "
              "first, its first step joining the other rows: fewer start-ups where a unit is short",
              scatterrings.fan_scatter_rings_phases,
              ROOTED_OK + (on_grid, hilbert.square_power_of_two_grid, fanscatter.several_streams,
                           scatterrings.four_units_a_node)),
    Algorithm("eager-turned-cut-scatter-doubling", (Kind.BROADCAST,),
              "turned-cut-scatter-doubling in eager phases: a node starts its next phase's "
              "messages while its previous phase's still stream",
              eager.eager(turned.turned(interleaved.interleaved_cut_scatter_doubling_phases)),
              turned.requirements(ROOTED_OK + (on_grid, power_of_two_members, splittable))),
    Algorithm("split-ties", (Kind.SPARSE,),
              "direct's pairwise steps on a torus, each block whose route runs half way round a "
              "ring (which e-cube routing sends one way from a whole row) half straight and half "
              "through a relay one hop the other way, forwarded in the next step",
              splitties.split_ties_phases, (splitties.tie_relays,)),
    Algorithm("farthest-first", (Kind.SPARSE,),
              "every message in one phase, each node's farthest destinations (the most links "
              "of their fixed routes) first: the long worms leave while the links are free and "
              "a node's last start-up sends the message delivered soonest",
              farthestfirst.farthest_first_phases,
              (farthestfirst.named_routes, fanscatter.several_streams)),
    Algorithm("both-ways", (Kind.CSHIFT, Kind.PERMUTATION),
              "a shift by one along a torus's rings, each block in n parts (n the ring's nodes): "
              "n - 1 phases, in each a part straight on and a long-way part one hop on round the "
              "ring, so both ways of every link carry (n - 1)/n of a block, where direct "
              "messages put a whole block on the short way",
              bothways.both_ways_phases, (bothways.ring_shift,)),
    Algorithm("corner-relay", (Kind.PERMUTATION,),
              "the messages of the longest routes relayed through the other corner of their "
              "route (the destination's row, the source's column), in pieces where long, the "
              "rest direct: round the links next to a transpose's diagonal",
              corner.corner_relay(1), (corner.grid_routes,)),
    Algorithm("corner-relay-wide", (Kind.PERMUTATION,),
              "corner-relay for the messages of the two longest route lengths",
              corner.corner_relay(2), (corner.grid_routes,)),
    Algorithm("subcube-doubling", (Kind.ALLGATHER,),
              "recursive doubling on a 2^a x 2^b grid by distance classes, farthest first (the "
              "largest exchanges between neighbours), a class's column and row bit in one round "
              "with the three others of a node's 2x2 subcube or in two, as a closed form ranks them",
              subcubes.subcube_doubling_phases,
              GROUP_OK + (on_grid, power_of_two_members, several_streams)),
    Algorithm("subcube-scatter", (Kind.SCATTER,),
              "the root's blocks down 2x2 subcubes of a 2^a x 2^b grid, nearest distance class "
              "first, a class's column and row bit in one round (three partners at once) or in "
              "two, as a closed form ranks them", subcubes.subcube_scatter_phases,
              ROOTED_OK + (on_grid, power_of_two_members, several_streams)),
    Algorithm("fan-scatter", (Kind.SCATTER,),
              "the root's blocks down the tree whose fan-outs a closed form picks (a holder "
              "starts its messages largest subtree first, while the first stream), subtrees "
              "along a Hilbert curve of the grid turned to start at the root (2^k x 2^k grids)",
              fanscatter.fan_scatter_phases,
              ROOTED_OK + (on_grid, hilbert.square_power_of_two_grid, fanscatter.several_streams)),
    Algorithm("neighbour-scatter", (Kind.SCATTER,),
              "the root's blocks to its four neighbours in chunks, one message a chunk on each "
              "link at once, each neighbour sending its region's blocks straight on while the "
              "next chunk streams in (eager phases; tori of 3x3 and more)",
              eager.eager(neighbourscatter.neighbour_scatter_phases),
              ROOTED_OK + (on_grid, neighbourscatter.four_neighbours, fanscatter.several_streams)),
    Algorithm("neighbour-gather", (Kind.GATHER,),
              "neighbour-scatter backwards: each region's blocks straight to its neighbour of the "
              "root, which sends them on in chunks, one message a chunk on each of the root's "
              "links at once (eager phases; tori of 3x3 and more)",
              eager.eager(neighbourscatter.neighbour_gather_phases),
              ROOTED_OK + (on_grid, neighbourscatter.four_neighbours, fanscatter.several_streams)),
    Algorithm("interleaved-doubling", (Kind.ALLGATHER,),
              "recursive doubling with rank bits dealt to the row and column bits farthest "
              "first, so the small first exchanges span the grid's long distances and the "
              "largest (half of the parts) are between neighbours (2^a x 2^b grids)",
              interleaved.interleaved_doubling_phases,
              GROUP_OK + (on_grid, power_of_two_members)),
    Algorithm("grid-direct", (Kind.ALLTOALL, Kind.ALLTOALLV),
              "on a mesh, the direct messages in rows x cols phases, in phase (a, b) node (r, c) to "
              "(tau_b(r), sigma_a(c)), sigma and tau Latin squares on a row and a column whose "
              "permutations each put the fewest messages a line allows on a link (8x8 mesh: 2 "
              "on a bisection link a phase, where direct's XOR pairs put 4)",
              gridexchange.grid_direct_phases, (on_grid, gridexchange.mesh_lines),
              gridexchange.grid_direct_columns),
    Algorithm("checkerboard-bruck", (Kind.ALLTOALL, Kind.ALLTOALLV, Kind.SPARSE),
              "Bruck's index algorithm on a torus of power-of-two rings, each shift in two rounds: "
              "in the first a checkerboard class of the nodes moves its blocks along the rows and "
              "the other along the columns, in the second the other way, so no two worms of a "
              "round share a wire (rings of up to 8) and both dimensions' links carry at once",
              checkerboard.checkerboard_bruck_phases, (checkerboard.torus_rings,),
              checkerboard.checkerboard_bruck_columns,
              messages=checkerboard.checkerboard_bruck_messages),
    Algorithm("signed-checkerboard-bruck", (Kind.ALLTOALL, Kind.ALLTOALLV, Kind.SPARSE),
              "checkerboard-bruck with every block moved the shorter way round each ring (-3 .. 4 "
              "on a ring of 8), a round's blocks in a message each way: every block crosses its "
              "fewest hops, two messages a node in most rounds",
              checkerboard.signed_checkerboard_bruck_phases, (checkerboard.torus_rings,),
              checkerboard.signed_checkerboard_bruck_columns,
              messages=checkerboard.signed_checkerboard_bruck_messages),
    Algorithm("pipelined-2dmesh", (Kind.ALLTOALL, Kind.ALLTOALLV),
              "on an 8x8 torus, each block along its column to its final row, then along that "
              "row (every ring distance in one message, 14 a node), one message a node an eager "
              "phase in a solver's order in which no wire carries two worms and no block moves "
              "in consecutive phases; a node's rows sent from its array where they are runs",
              pipelined2d.pipelined_2dmesh_phases, (pipelined2d.torus_8x8,)),
    Algorithm("rows-bruck-columns-direct", (Kind.ALLTOALL, Kind.ALLTOALLV, Kind.SPARSE),
              "Bruck along the rows of a torus of power-of-two rings (each block to its final "
              "column, log2 cols rounds), then a node's blocks for each row straight down its "
              "column, one message a row: one message in that stage where every block goes to one "
              "row (a sparse pattern converging on a few nodes)",
              checkerboard.rows_bruck_columns_direct_phases, (checkerboard.torus_rings,),
              checkerboard.rows_bruck_columns_direct_columns,
              messages=checkerboard.rows_bruck_columns_direct_messages),
    Algorithm("engine-rounds", (Kind.ALLTOALL, Kind.ALLTOALLV),
              "on a mesh of one-engine nodes, the direct messages in rounds a greedy search finds "
              "(159 on paragon:8x8) in which a node sends or receives one and no link carries two, "
              "a barrier after every second round so that they do not drift",
              enginerounds.engine_rounds_phases, (on_grid, enginerounds.shared_engine_mesh)),
    Algorithm("exchange-steps", (Kind.ALLTOALL, Kind.ALLTOALLV),
              "on a mesh of one-engine nodes, the direct messages as pairwise exchanges in steps "
              "a greedy search finds, each pair one way then back, no link carrying two first "
              "messages or two replies of a step: each pair keeps itself in step, no barriers",
              exchangesteps.exchange_steps_phases, (on_grid, enginerounds.shared_engine_mesh)),
    Algorithm("bidirectional-rings", (Kind.ALLGATHER,),
              "half of each part round the rows then the columns, the other half round the "
              "columns then the rows, each ring both ways at once: all four links of a node busy",
              rings.bidirectional_phases, GROUP_OK + (on_grid, eight_pieces)),
    Algorithm("bidirectional-rings", (Kind.ALLREDUCE,),
              "a reduce-scatter round every row, then every column, then the allgather back, "
              "each ring both ways at once (a node's chains from east and west meet at it): a "
              "node drives two links out and two in, its memory's four streams",
              ringreduce.bidirectional_allreduce_phases,
              GROUP_OK + (on_grid, ringreduce.grid_units)),
    Algorithm("crossed-halving", (Kind.ALLREDUCE,),
              "recursive halving of two halves of the partial at once, one across the rows "
              "first, the other down the columns first, each dimension's partners neighbours "
              "in the first two steps; the last step by recursive doubling where its pieces "
              "are short; the doubling back: a node sends two messages a step and takes two, "
              "its memory's four streams (2^a x 2^b tori whose nodes stream several)",
              crossedhalving.crossed_allreduce_phases,
              GROUP_OK + HALVING_GRID),
    Algorithm("crossed-halving", (Kind.REDUCE,),
              "crossed-halving's reduce-scatter (two halves of the partial halved at once, one "
              "across the rows first, the other down the columns first), then every node's "
              "reduced units to the root by its four links (2^a x 2^b tori whose nodes stream "
              "several)", crossedhalving.crossed_reduce_phases,
              ROOTED_OK + HALVING_GRID),
    Algorithm("grouped-halving", (Kind.REDUCE,),
              "crossed-halving's two halves, both across the rows first, the second on rings "
              "rotated by one position; some pairs of a half's steps at once, each node sending "
              "the three others of its 2 x 2 block their units (the second half's first two "
              "steps and next two, the first half's second and third); each half's units to the "
              "root on their own (2^a x 2^b tori whose nodes stream several)",
              groupedhalving.grouped_reduce_phases,
              ROOTED_OK + HALVING_GRID),
    Algorithm("collected-halving", (Kind.REDUCE,),
              "grouped-halving whose halves' last step is not halved: each pair (or 2 x 2 block) "
              "sends its units to one collector (the root; a node of the root's row or column; "
              "else the nearer member or the root's-row node of its column, whichever keeps the "
              "root's in-links even), which sends them to the root (2^a x 2^b tori whose nodes "
              "stream several)",
              collectedhalving.collected_reduce_phases,
              ROOTED_OK + HALVING_GRID),
    Algorithm("bidirectional-rings", (Kind.REDUCE,),
              "the bidirectional-rings allreduce's reduce-scatter (round every row, then every "
              "column, each ring both ways at once), then every node's reduced piece straight "
              "to the root", ringreduce.bidirectional_reduce_phases,
              ROOTED_OK + (on_grid, ringreduce.grid_units)),
)

DIMENSIONAL: tuple[Algorithm, ...] = (
    Algorithm("dim-bruck", (Kind.ALLTOALL, Kind.ALLTOALLV, Kind.SPARSE),
              "Bruck's index algorithm along each dimension in turn (rows, then columns; a "
              "hypercube's bits): sum of ceil(log2 n_i) rounds, each inside one ring or line",
              index.dim_bruck_phases, (on_dimensions,), index.dim_bruck_columns,
              index.dim_bruck_messages),
    Algorithm("xor-relay", (Kind.PERMUTATION,),
              "on a hypercube, one round per mask of the messages' XOR subspace V (every round a "
              "translation: no two messages share a link), each block in |V|/2 pieces, one direct, "
              "the others through a relay over a pair of rounds (a transpose: 1.75 blocks in 7 rounds "
              "on 64 nodes, where e-cube routes put 4 blocks on one link)",
              xorrelay.xor_relay_phases, (xorrelay.xor_rounds,)),
)

# Where a node's one engine carries its sends and its receives, one message at a time (the
# Paragon, SP2 and CS-2; offer.Library.of): elsewhere a node sends and receives at once.
ONE_ENGINE: tuple[Algorithm, ...] = (
    Algorithm("paired-ring", (Kind.ALLGATHER,),
              "the ring with every step in two halves, even ranks sending first, then odd: each "
              "half a matching of the nodes' one engines (a plain ring step's messages wait on "
              "each other's engines in a chain); even member counts",
              pairedring.paired_ring_allgather_phases, GROUP_OK + (pairedring.even_members,)),
    Algorithm("paired-ring", (Kind.ALLREDUCE,),
              "the ring allreduce (reduce-scatter, then allgather round the ring) with every step "
              "in two halves, even ranks sending first, then odd; even member counts",
              pairedring.paired_ring_allreduce_phases, GROUP_OK + (pairedring.even_members,)),
    Algorithm("zigzag-ring", (Kind.ALLGATHER,),
              "the ring over ranks 1, 0, 3, 2, ... (v XOR 1), one phase a step: each member's two "
              "neighbours both above or both below it, so a message taking its lower engine "
              "first waits for no chain; even member counts",
              pairedring.zigzag_ring_allgather_phases, GROUP_OK + (pairedring.even_members,)),
    Algorithm("zigzag-ring", (Kind.ALLREDUCE,),
              "the ring allreduce over ranks 1, 0, 3, 2, ... (v XOR 1), one phase a step; even "
              "member counts", pairedring.zigzag_ring_allreduce_phases,
              GROUP_OK + (pairedring.even_members,)),
)

# Beside Bokhari's exchange family (targets/bokhari), whose `direct` on 2^d nodes takes the name
# of GENERIC's and opens with a barrier after every node's copy of its own block (seed 003
# Sec. 2, Sec. 4): the generic direct exchange under its own name (offer.Library.of).
BESIDE_EXCHANGE_FAMILY: tuple[Algorithm, ...] = (
    Algorithm("direct-copy-beside", (Kind.ALLTOALL,),
              "the generic direct exchange where the exchange family's `direct` takes its name "
              "(2^d nodes): the same XOR steps without the family's opening barrier, each node's "
              "copy of its own block beside its first message",
              lambda coll, machine: list(direct_phases(coll)), (power_of_two_nodes,),
              columns=lambda coll, machine: direct_columns(coll)),
)
