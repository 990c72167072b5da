//! Leiden community detection (Traag, Waltman & van Eck 2019) and modularity.
//!
//! [`leiden`] maximises modularity with a resolution `γ`,
//! `Q = 1/(2m) Σ_ij [A_ij − γ k_i k_j / (2m)] δ(c_i, c_j)`. One iteration has
//! three phases, repeated on ever smaller aggregate networks:
//!
//! 1. **Fast local moving**: nodes are visited from a queue (initially in a
//!    random order); a node moves to the neighbouring (or empty) community
//!    with the largest modularity gain, and its neighbours outside that
//!    community are queued again.
//! 2. **Refinement**: inside each community every node starts as a singleton.
//!    Visiting nodes in random order, a singleton that is well connected to
//!    its community (`w(v, S − v) ≥ γ/(2m) · k_v · (K_S − k_v)`) joins a
//!    well-connected sub-cluster of the same community, chosen at random with
//!    probability `∝ exp(gain / θ)` among those with a non-negative gain. The
//!    randomness `θ = 0.01` × the mean edge weight follows the reference
//!    implementation (θ = 0.01 for unit weights) and is scaled so results do not
//!    depend on the unit of the weights: the choice is nearly greedy but breaks
//!    near-ties randomly. Sub-clusters only grow along edges, so each is
//!    connected.
//! 3. **Aggregation**: each refined sub-cluster becomes one node; the
//!    aggregate starts from the unrefined partition, so communities are kept
//!    while the sub-clusters inside them can still move separately.
//!
//! Levels repeat until local moving leaves every aggregate node in its own
//! community, refinement merges nothing, or `max_levels` levels have run.
//! Whole iterations repeat from the resulting partition (each can only
//! improve it) until one changes nothing or raises modularity by less than
//! 0.001, at most 10 times: on graphs with weak structure later iterations
//! keep finding gains of 1e-4 and below, which are not worth a full pass.
//! A final pass splits any community that is not connected (possible only
//! when `max_levels` cuts an iteration short; splitting never lowers
//! modularity). The visit orders and refinement choices come from a
//! SplitMix64 generator seeded with `seed`, so results are deterministic. A
//! move must beat staying by `1e-10 · k_v` so that rounding noise cannot make
//! nodes oscillate.

use crate::graph::Graph;
use crate::rng::SplitMix64;
use std::collections::{HashMap, VecDeque};

/// Maximum number of full Leiden iterations (each a multi-level pass).
const MAX_ITERATIONS: usize = 10;
/// An iteration raising modularity by less than this ends the run.
const MIN_IMPROVEMENT: f64 = 1e-3;
/// Refinement randomness θ relative to the mean edge weight.
const THETA: f64 = 0.01;
/// Minimum gain over staying, relative to the node's weight, for a move.
const GAIN_MARGIN: f64 = 1e-10;

/// Settings for Leiden.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LeidenParams {
    /// Resolution `γ`: 1.0 is standard modularity; larger values give more,
    /// smaller communities. A negative or non-finite value means 1.0.
    pub resolution: f64,
    /// Maximum number of aggregation levels per iteration (default 10; at
    /// least 1 is used).
    pub max_levels: usize,
    /// Seed of the deterministic random generator driving the visit order and
    /// the refinement choices (default 42).
    pub seed: u64,
}

impl Default for LeidenParams {
    fn default() -> Self {
        LeidenParams {
            resolution: 1.0,
            max_levels: 10,
            seed: 42,
        }
    }
}

/// Result of community detection.
#[derive(Debug, Clone, PartialEq)]
pub struct Communities {
    /// Community id per node, dense in `0..count`, numbered by community size
    /// descending, ties by smallest member.
    pub membership: Vec<u32>,
    /// Number of communities.
    pub count: usize,
    /// Modularity of the partition at the requested resolution.
    pub modularity: f64,
}

/// Leiden community detection on `graph` (see the module docs).
///
/// Isolated nodes are their own communities; an empty graph (no nodes, or no
/// edges) gives one community per node and modularity 0. Communities are
/// always connected.
pub fn leiden(graph: &Graph, params: &LeidenParams) -> Communities {
    let n = graph.node_count();
    let gamma = if params.resolution.is_finite() && params.resolution >= 0.0 {
        params.resolution
    } else {
        1.0
    };
    let base = Net::from_graph(graph);
    let total: f64 = base.node_weight.iter().sum();
    let mut membership: Vec<u32> = (0..n as u32).collect();
    if total > 0.0 {
        let ctx = Ctx {
            res: gamma / total,
            theta: THETA * total / base.targets.len().max(1) as f64,
        };
        let mut rng = SplitMix64(params.seed);
        let mut quality = modularity(graph, &membership, gamma);
        for _ in 0..MAX_ITERATIONS {
            if !leiden_iteration(&base, &mut membership, &ctx, params.max_levels, &mut rng) {
                break;
            }
            let previous = quality;
            quality = modularity(graph, &membership, gamma);
            if quality - previous < MIN_IMPROVEMENT {
                break;
            }
        }
    }
    let (membership, count) = connected_and_ordered(graph, &membership);
    let modularity = modularity(graph, &membership, gamma);
    Communities {
        membership,
        count,
        modularity,
    }
}

/// Modularity of a given membership (with resolution `gamma`):
/// `Q = 1/(2m) Σ_ij [A_ij − γ k_i k_j / (2m)] δ(c_i, c_j)`.
///
/// Community ids may be any `u32` values. Returns 0 for a graph without
/// edges, and NaN if `membership.len()` differs from the node count.
pub fn modularity(graph: &Graph, membership: &[u32], resolution: f64) -> f64 {
    let n = graph.node_count();
    if membership.len() != n {
        return f64::NAN;
    }
    let mut strength = vec![0f64; n];
    let mut internal = 0f64;
    for (u, &cu) in membership.iter().enumerate() {
        for (v, w) in graph.neighbors(u as u32) {
            let w = f64::from(w);
            strength[u] += w;
            if membership[v as usize] == cu {
                internal += w;
            }
        }
    }
    let total: f64 = strength.iter().sum();
    if total <= 0.0 {
        return 0.0;
    }
    let max_id = membership.iter().copied().max().unwrap_or(0) as usize;
    let squares: f64 = if max_id < 4 * n {
        let mut k = vec![0f64; max_id + 1];
        for (u, &c) in membership.iter().enumerate() {
            k[c as usize] += strength[u];
        }
        k.iter().map(|x| x * x).sum()
    } else {
        let mut k: HashMap<u32, f64> = HashMap::new();
        for (u, &c) in membership.iter().enumerate() {
            *k.entry(c).or_insert(0.0) += strength[u];
        }
        k.values().map(|x| x * x).sum()
    };
    internal / total - resolution * squares / (total * total)
}

/// The `k` members of `community` with the highest weighted degree inside the
/// community (ties by node id), best first — useful to label a community.
/// Nodes without a membership entry are ignored.
pub fn central_members(graph: &Graph, membership: &[u32], community: u32, k: usize) -> Vec<u32> {
    let n = graph.node_count().min(membership.len());
    let mut scored: Vec<(f64, u32)> = (0..n as u32)
        .filter(|&u| membership[u as usize] == community)
        .map(|u| {
            let inside: f64 = graph
                .neighbors(u)
                .filter(|&(v, _)| membership.get(v as usize) == Some(&community))
                .map(|(_, w)| f64::from(w))
                .sum();
            (inside, u)
        })
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    scored.into_iter().take(k).map(|(_, u)| u).collect()
}

/// Scaled constants shared by the phases.
struct Ctx {
    /// `γ / (2m)`.
    res: f64,
    /// Refinement randomness in edge-weight units.
    theta: f64,
}

/// Weighted network of one level (f64 weights, no self-loops in the rows;
/// self-loop weight is kept only in `node_weight`).
struct Net {
    offsets: Vec<usize>,
    targets: Vec<u32>,
    weights: Vec<f64>,
    /// Strength `k_i`, including the weight of edges folded into the node.
    node_weight: Vec<f64>,
}

impl Net {
    fn from_graph(graph: &Graph) -> Net {
        let n = graph.node_count();
        let mut offsets = Vec::with_capacity(n + 1);
        let mut targets = Vec::with_capacity(2 * graph.edge_count());
        let mut weights = Vec::with_capacity(2 * graph.edge_count());
        let mut node_weight = Vec::with_capacity(n);
        offsets.push(0);
        for u in 0..n as u32 {
            let mut k = 0f64;
            for (v, w) in graph.neighbors(u) {
                targets.push(v);
                weights.push(f64::from(w));
                k += f64::from(w);
            }
            offsets.push(targets.len());
            node_weight.push(k);
        }
        Net {
            offsets,
            targets,
            weights,
            node_weight,
        }
    }

    fn len(&self) -> usize {
        self.node_weight.len()
    }

    fn row(&self, u: usize) -> impl Iterator<Item = (usize, f64)> + '_ {
        let (lo, hi) = (self.offsets[u], self.offsets[u + 1]);
        self.targets[lo..hi]
            .iter()
            .map(|&v| v as usize)
            .zip(self.weights[lo..hi].iter().copied())
    }

    /// Collapses each cluster of `cluster` (dense ids `0..count`) into a node.
    fn aggregate(&self, cluster: &[u32], count: usize) -> Net {
        let members = group_by(cluster, count);
        let mut offsets = Vec::with_capacity(count + 1);
        let mut targets = Vec::new();
        let mut weights = Vec::new();
        let mut node_weight = Vec::with_capacity(count);
        let mut acc = vec![0f64; count];
        let mut touched: Vec<u32> = Vec::new();
        offsets.push(0);
        for c in 0..count {
            let mut weight = 0f64;
            for &i in members.of(c) {
                let i = i as usize;
                weight += self.node_weight[i];
                for (j, w) in self.row(i) {
                    let d = cluster[j];
                    if d as usize == c {
                        continue;
                    }
                    if acc[d as usize] == 0.0 {
                        touched.push(d);
                    }
                    acc[d as usize] += w;
                }
            }
            // Rows are left in first-touch order: deterministic, and sorting
            // them would cost more than it saves.
            for &d in &touched {
                targets.push(d);
                weights.push(std::mem::take(&mut acc[d as usize]));
            }
            touched.clear();
            offsets.push(targets.len());
            node_weight.push(weight);
        }
        Net {
            offsets,
            targets,
            weights,
            node_weight,
        }
    }
}

/// Members of each cluster, as a counting sort of node ids.
struct Groups {
    start: Vec<usize>,
    nodes: Vec<u32>,
}

impl Groups {
    fn of(&self, c: usize) -> &[u32] {
        &self.nodes[self.start[c]..self.start[c + 1]]
    }
}

fn group_by(cluster: &[u32], count: usize) -> Groups {
    let mut start = vec![0usize; count + 1];
    for &c in cluster {
        start[c as usize + 1] += 1;
    }
    for c in 0..count {
        start[c + 1] += start[c];
    }
    let mut cursor = start.clone();
    let mut nodes = vec![0u32; cluster.len()];
    for (i, &c) in cluster.iter().enumerate() {
        nodes[cursor[c as usize]] = i as u32;
        cursor[c as usize] += 1;
    }
    Groups { start, nodes }
}

/// Renumbers ids (all `< ids.len()`) densely in order of first appearance;
/// returns the count.
fn renumber(ids: &mut [u32]) -> usize {
    let mut map = vec![u32::MAX; ids.len()];
    let mut count = 0u32;
    for id in ids.iter_mut() {
        let slot = &mut map[*id as usize];
        if *slot == u32::MAX {
            *slot = count;
            count += 1;
        }
        *id = *slot;
    }
    count as usize
}

/// One Leiden iteration starting from `membership` (a partition of the base
/// network's nodes, updated in place). Returns whether any node moved.
fn leiden_iteration(
    base: &Net,
    membership: &mut [u32],
    ctx: &Ctx,
    max_levels: usize,
    rng: &mut SplitMix64,
) -> bool {
    let mut part = membership.to_vec();
    renumber(&mut part);
    // Base node -> node of the current aggregate network.
    let mut node_of: Vec<u32> = (0..base.len() as u32).collect();
    let mut aggregated: Option<Net> = None;
    let mut changed = false;
    for _ in 0..max_levels.max(1) {
        let net = aggregated.as_ref().unwrap_or(base);
        changed |= local_moving(net, &mut part, ctx, rng);
        let count = renumber(&mut part);
        if count == net.len() {
            break;
        }
        let mut refined = refine(net, &part, count, ctx, rng);
        let refined_count = renumber(&mut refined);
        if refined_count == net.len() {
            break;
        }
        let mut next_part = vec![0u32; refined_count];
        for (i, &r) in refined.iter().enumerate() {
            next_part[r as usize] = part[i];
        }
        for x in node_of.iter_mut() {
            *x = refined[*x as usize];
        }
        aggregated = Some(net.aggregate(&refined, refined_count));
        part = next_part;
    }
    for (m, &x) in membership.iter_mut().zip(&node_of) {
        *m = part[x as usize];
    }
    changed
}

/// Fast local moving of nodes (queue-based). `part` holds ids `< net.len()`.
/// Returns whether any node changed community.
fn local_moving(net: &Net, part: &mut [u32], ctx: &Ctx, rng: &mut SplitMix64) -> bool {
    let n = net.len();
    let mut comm_weight = vec![0f64; n];
    let mut comm_size = vec![0u32; n];
    for (i, &c) in part.iter().enumerate() {
        comm_weight[c as usize] += net.node_weight[i];
        comm_size[c as usize] += 1;
    }
    let mut empty: Vec<u32> = (0..n as u32)
        .rev()
        .filter(|&c| comm_size[c as usize] == 0)
        .collect();
    let mut queue: VecDeque<u32> = rng.permutation(n).into();
    let mut in_queue = vec![true; n];
    let mut link = vec![0f64; n];
    let mut neighbours: Vec<u32> = Vec::new();
    let mut moved = false;
    while let Some(i) = queue.pop_front() {
        let i = i as usize;
        in_queue[i] = false;
        let ki = net.node_weight[i];
        let own = part[i];
        comm_weight[own as usize] -= ki;
        comm_size[own as usize] -= 1;
        if comm_size[own as usize] == 0 {
            empty.push(own);
        }
        for (j, w) in net.row(i) {
            let c = part[j];
            if link[c as usize] == 0.0 {
                neighbours.push(c);
            }
            link[c as usize] += w;
        }
        let gain = |c: u32, link: &[f64]| link[c as usize] - ki * comm_weight[c as usize] * ctx.res;
        let mut best = own;
        let mut best_gain = gain(own, &link) + GAIN_MARGIN * ki;
        for &c in &neighbours {
            let g = gain(c, &link);
            if g > best_gain {
                best = c;
                best_gain = g;
            }
        }
        if let Some(&e) = empty.last()
            && 0.0 > best_gain
        {
            best = e;
        }
        for &c in &neighbours {
            link[c as usize] = 0.0;
        }
        neighbours.clear();
        if comm_size[best as usize] == 0 {
            // `best` is then the top of the empty stack (own or a fresh one).
            empty.pop();
        }
        comm_weight[best as usize] += ki;
        comm_size[best as usize] += 1;
        if best != own {
            part[i] = best;
            moved = true;
            for (j, _) in net.row(i) {
                if !in_queue[j] && part[j] != best {
                    in_queue[j] = true;
                    queue.push_back(j as u32);
                }
            }
        }
    }
    moved
}

/// Refinement: splits each community of `part` (dense ids `0..count`) into
/// well-connected sub-clusters by merging singletons. Returns a sub-cluster id
/// per node (not dense).
fn refine(net: &Net, part: &[u32], count: usize, ctx: &Ctx, rng: &mut SplitMix64) -> Vec<u32> {
    let n = net.len();
    let mut comm_total = vec![0f64; count];
    for (i, &c) in part.iter().enumerate() {
        comm_total[c as usize] += net.node_weight[i];
    }
    let mut refined: Vec<u32> = (0..n as u32).collect();
    let mut cluster_weight = net.node_weight.clone();
    // Weight from each sub-cluster to the rest of its community.
    let mut external: Vec<f64> = (0..n)
        .map(|i| {
            net.row(i)
                .filter(|&(j, _)| part[j] == part[i])
                .map(|(_, w)| w)
                .sum()
        })
        .collect();
    let mut non_singleton = vec![false; n];
    let mut link = vec![0f64; n];
    let mut neighbours: Vec<u32> = Vec::new();
    let mut candidates: Vec<(u32, f64)> = Vec::new();
    let well_connected =
        |ext: f64, weight: f64, total: f64| ext >= weight * (total - weight) * ctx.res;
    for i in rng.permutation(n) {
        let i = i as usize;
        let s = part[i];
        let ki = net.node_weight[i];
        let total = comm_total[s as usize];
        if non_singleton[i] || !well_connected(external[i], ki, total) {
            continue;
        }
        cluster_weight[i] = 0.0;
        external[i] = 0.0;
        for (j, w) in net.row(i) {
            if part[j] == s {
                let c = refined[j];
                if link[c as usize] == 0.0 {
                    neighbours.push(c);
                }
                link[c as usize] += w;
            }
        }
        // Staying alone has gain 0 and is always a candidate.
        candidates.push((i as u32, 0.0));
        let mut max_gain = 0f64;
        for &c in &neighbours {
            let cw = cluster_weight[c as usize];
            if well_connected(external[c as usize], cw, total) {
                let g = link[c as usize] - ki * cw * ctx.res;
                if g >= 0.0 {
                    candidates.push((c, g));
                    max_gain = max_gain.max(g);
                }
            }
        }
        for &c in &neighbours {
            link[c as usize] = 0.0;
        }
        neighbours.clear();
        let chosen = choose(&mut candidates, max_gain, ctx.theta, rng);
        candidates.clear();
        cluster_weight[chosen as usize] += ki;
        for (j, w) in net.row(i) {
            if part[j] == s {
                if refined[j] == chosen {
                    external[chosen as usize] -= w;
                } else {
                    external[chosen as usize] += w;
                }
            }
        }
        if chosen as usize != i {
            refined[i] = chosen;
            non_singleton[chosen as usize] = true;
        }
    }
    refined
}

/// Picks a candidate with probability `∝ exp((gain − max_gain) / θ)`.
fn choose(candidates: &mut [(u32, f64)], max_gain: f64, theta: f64, rng: &mut SplitMix64) -> u32 {
    let mut total = 0f64;
    for c in candidates.iter_mut() {
        c.1 = ((c.1 - max_gain) / theta).exp();
        total += c.1;
    }
    let mut x = rng.unit() * total;
    for &(c, p) in candidates.iter() {
        if x < p {
            return c;
        }
        x -= p;
    }
    // Rounding left `x` past the end: take the best candidate.
    candidates
        .iter()
        .rev()
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .map_or(0, |c| c.0)
}

/// Splits communities into connected components, then numbers them by size
/// descending, ties by smallest member. Returns (membership, count).
fn connected_and_ordered(graph: &Graph, membership: &[u32]) -> (Vec<u32>, usize) {
    let n = membership.len();
    let mut component = vec![u32::MAX; n];
    let mut sizes: Vec<usize> = Vec::new();
    let mut stack: Vec<u32> = Vec::new();
    for start in 0..n {
        if component[start] != u32::MAX {
            continue;
        }
        let id = sizes.len() as u32;
        let label = membership[start];
        component[start] = id;
        stack.push(start as u32);
        let mut size = 0;
        while let Some(u) = stack.pop() {
            size += 1;
            for (v, _) in graph.neighbors(u) {
                let v = v as usize;
                if component[v] == u32::MAX && membership[v] == label {
                    component[v] = id;
                    stack.push(v as u32);
                }
            }
        }
        sizes.push(size);
    }
    // Components are discovered in order of their smallest member.
    let mut order: Vec<u32> = (0..sizes.len() as u32).collect();
    order.sort_by(|&a, &b| sizes[b as usize].cmp(&sizes[a as usize]).then(a.cmp(&b)));
    let mut rank = vec![0u32; sizes.len()];
    for (r, &c) in order.iter().enumerate() {
        rank[c as usize] = r as u32;
    }
    let membership = component.iter().map(|&c| rank[c as usize]).collect();
    (membership, sizes.len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    use crate::rng::random_edges;

    /// `k` cliques of `size` nodes; clique `c` is linked to clique `c + 1` by
    /// one edge (a ring when `ring`).
    fn cliques(k: u32, size: u32, ring: bool) -> Graph {
        let mut edges = Vec::new();
        for c in 0..k {
            for a in 0..size {
                for b in a + 1..size {
                    edges.push((c * size + a, c * size + b, 1.0));
                }
            }
            if ring || c + 1 < k {
                edges.push((c * size, ((c + 1) % k) * size + size - 1, 1.0));
            }
        }
        Graph::from_edges((k * size) as usize, &edges)
    }

    fn brute_force_modularity(g: &Graph, membership: &[u32], gamma: f64) -> f64 {
        let n = g.node_count();
        let k: Vec<f64> = (0..n as u32)
            .map(|u| f64::from(g.weighted_degree(u)))
            .collect();
        let two_m: f64 = k.iter().sum();
        if two_m == 0.0 {
            return 0.0;
        }
        let mut q = 0.0;
        for i in 0..n {
            for j in 0..n {
                if membership[i] == membership[j] {
                    let a = g
                        .neighbors(i as u32)
                        .find(|&(v, _)| v as usize == j)
                        .map_or(0.0, |(_, w)| f64::from(w));
                    q += a - gamma * k[i] * k[j] / two_m;
                }
            }
        }
        q / two_m
    }

    fn assert_connected(g: &Graph, c: &Communities) {
        for id in 0..c.count as u32 {
            let members: Vec<u32> = (0..g.node_count() as u32)
                .filter(|&u| c.membership[u as usize] == id)
                .collect();
            assert!(!members.is_empty(), "community {id} is empty");
            let mut seen = vec![false; g.node_count()];
            let mut stack = vec![members[0]];
            seen[members[0] as usize] = true;
            let mut reached = 0;
            while let Some(u) = stack.pop() {
                reached += 1;
                for (v, _) in g.neighbors(u) {
                    if !seen[v as usize] && c.membership[v as usize] == id {
                        seen[v as usize] = true;
                        stack.push(v);
                    }
                }
            }
            assert_eq!(reached, members.len(), "community {id} is not connected");
        }
    }

    fn check_shape(g: &Graph, c: &Communities) {
        assert_eq!(c.membership.len(), g.node_count());
        let mut sizes = vec![0usize; c.count];
        for &m in &c.membership {
            assert!((m as usize) < c.count);
            sizes[m as usize] += 1;
        }
        assert!(sizes.iter().all(|&s| s > 0), "ids are dense");
        assert!(sizes.windows(2).all(|w| w[0] >= w[1]), "ordered by size");
        let q = modularity(g, &c.membership, 1.0);
        assert!((q - c.modularity).abs() < 1e-12);
    }

    #[test]
    fn two_cliques_joined_by_one_edge() {
        let g = cliques(2, 5, false);
        let c = leiden(&g, &LeidenParams::default());
        assert_eq!(c.count, 2);
        assert_eq!(c.membership, vec![0, 0, 0, 0, 0, 1, 1, 1, 1, 1]);
        check_shape(&g, &c);
    }

    /// Zachary's karate club (1-based in the literature; 0-based here).
    fn karate() -> Graph {
        let adj: [(u32, &[u32]); 26] = [
            (1, &[2, 3, 4, 5, 6, 7, 8, 9, 11, 12, 13, 14, 18, 20, 22, 32]),
            (2, &[3, 4, 8, 14, 18, 20, 22, 31]),
            (3, &[4, 8, 9, 10, 14, 28, 29, 33]),
            (4, &[8, 13, 14]),
            (5, &[7, 11]),
            (6, &[7, 11, 17]),
            (7, &[17]),
            (9, &[31, 33, 34]),
            (10, &[34]),
            (14, &[34]),
            (15, &[33, 34]),
            (16, &[33, 34]),
            (19, &[33, 34]),
            (20, &[34]),
            (21, &[33, 34]),
            (23, &[33, 34]),
            (24, &[26, 28, 30, 33, 34]),
            (25, &[26, 28, 32]),
            (26, &[32]),
            (27, &[30, 34]),
            (28, &[34]),
            (29, &[32, 34]),
            (30, &[33, 34]),
            (31, &[33, 34]),
            (32, &[33, 34]),
            (33, &[34]),
        ];
        let edges: Vec<(u32, u32, f32)> = adj
            .iter()
            .flat_map(|&(a, bs)| bs.iter().map(move |&b| (a - 1, b - 1, 1.0)))
            .collect();
        assert_eq!(edges.len(), 78);
        Graph::from_edges(34, &edges)
    }

    #[test]
    fn karate_club_reaches_known_optimum() {
        // The maximum modularity of the karate club is 0.41979 (4 communities).
        let g = karate();
        let c = leiden(&g, &LeidenParams::default());
        assert!(c.modularity > 0.4197, "Q = {}", c.modularity);
        assert_eq!(c.count, 4);
        for seed in 0..20 {
            let c = leiden(
                &g,
                &LeidenParams {
                    seed,
                    ..LeidenParams::default()
                },
            );
            assert!(c.modularity > 0.4197, "seed {seed}: Q = {}", c.modularity);
        }
    }

    #[test]
    fn ring_of_ten_cliques() {
        let g = cliques(10, 5, true);
        let c = leiden(&g, &LeidenParams::default());
        assert_eq!(c.count, 10);
        for clique in 0..10 {
            let id = c.membership[clique * 5];
            assert!((0..5).all(|i| c.membership[clique * 5 + i] == id));
        }
        check_shape(&g, &c);
        // Numbering ties (all size 5) go by smallest member.
        assert_eq!(c.membership[0], 0);
        assert_eq!(c.membership[5], 1);
    }

    #[test]
    fn beats_trivial_partitions_and_is_connected() {
        for seed in [1, 2, 3] {
            let n = 1500;
            let g = Graph::from_edges(n, &random_edges(n, 6000, seed));
            for params in [
                LeidenParams::default(),
                LeidenParams {
                    max_levels: 1,
                    seed,
                    ..LeidenParams::default()
                },
                LeidenParams {
                    resolution: 2.0,
                    seed,
                    ..LeidenParams::default()
                },
            ] {
                let c = leiden(&g, &params);
                let gamma = params.resolution;
                let singletons: Vec<u32> = (0..n as u32).collect();
                let one = vec![0u32; n];
                assert!(c.modularity >= modularity(&g, &singletons, gamma));
                assert!(c.modularity >= modularity(&g, &one, gamma));
                assert!(c.count > 1 && c.count < n);
                assert!((modularity(&g, &c.membership, gamma) - c.modularity).abs() < 1e-12);
                assert_connected(&g, &c);
            }
        }
    }

    #[test]
    fn deterministic_for_a_seed() {
        let n = 800;
        let g = Graph::from_edges(n, &random_edges(n, 3000, 9));
        let params = LeidenParams {
            seed: 7,
            ..LeidenParams::default()
        };
        let a = leiden(&g, &params);
        let b = leiden(&g, &params);
        assert_eq!(a, b);
        let other = leiden(&g, &LeidenParams::default());
        assert!(other.modularity > 0.3 && a.modularity > 0.3);
    }

    #[test]
    fn empty_and_edgeless_graphs() {
        let g = Graph::from_edges(0, &[]);
        let c = leiden(&g, &LeidenParams::default());
        assert_eq!((c.membership.len(), c.count, c.modularity), (0, 0, 0.0));
        let g = Graph::from_edges(4, &[]);
        let c = leiden(&g, &LeidenParams::default());
        assert_eq!(c.membership, vec![0, 1, 2, 3]);
        assert_eq!((c.count, c.modularity), (4, 0.0));
        // Isolated nodes next to a clique stay alone.
        let mut edges = Vec::new();
        for a in 0..4 {
            for b in a + 1..4 {
                edges.push((a, b, 1.0));
            }
        }
        let g = Graph::from_edges(6, &edges);
        let c = leiden(&g, &LeidenParams::default());
        assert_eq!(c.membership, vec![0, 0, 0, 0, 1, 2]);
    }

    #[test]
    fn modularity_known_values() {
        let g = cliques(2, 5, false);
        let split = [0, 0, 0, 0, 0, 1, 1, 1, 1, 1];
        // 21 edges, 2m = 42; each side: 20 internal (directed), K = 21.
        let expected = 40.0 / 42.0 - 2.0 * 21.0 * 21.0 / (42.0 * 42.0);
        assert!((modularity(&g, &split, 1.0) - expected).abs() < 1e-12);
        assert!((modularity(&g, &[0; 10], 1.0)).abs() < 1e-12);
        // Arbitrary (sparse, large) ids give the same value.
        let sparse = split.map(|c| if c == 0 { 7 } else { u32::MAX });
        assert!((modularity(&g, &sparse, 1.0) - expected).abs() < 1e-12);
        assert!(modularity(&g, &[0; 3], 1.0).is_nan());
    }

    #[test]
    fn central_members_ranks_by_internal_weight() {
        // Community 0 = {0,1,2,3}: star around 2 plus edge 0-1; node 3 also
        // links heavily to node 4 in another community.
        let g = Graph::from_edges(
            6,
            &[
                (2, 0, 1.0),
                (2, 1, 1.0),
                (2, 3, 1.0),
                (0, 1, 1.0),
                (3, 4, 9.0),
                (4, 5, 1.0),
            ],
        );
        let membership = [0, 0, 0, 0, 1, 1];
        assert_eq!(central_members(&g, &membership, 0, 3), vec![2, 0, 1]);
        assert_eq!(central_members(&g, &membership, 0, 10), vec![2, 0, 1, 3]);
        assert_eq!(central_members(&g, &membership, 1, 1), vec![4]);
        assert!(central_members(&g, &membership, 5, 3).is_empty());
    }

    proptest! {
        #[test]
        fn leiden_invariants(
            n in 0usize..30,
            raw in proptest::collection::vec((0u32..30, 0u32..30, 0.1f32..5.0), 0..80),
            seed in any::<u64>(),
            resolution in 0.2f64..3.0,
        ) {
            let g = Graph::from_edges(n, &raw);
            let params = LeidenParams { resolution, seed, ..LeidenParams::default() };
            let c = leiden(&g, &params);
            prop_assert_eq!(c.membership.len(), n);
            let mut used = vec![false; c.count];
            for &m in &c.membership {
                prop_assert!((m as usize) < c.count);
                used[m as usize] = true;
            }
            prop_assert!(used.iter().all(|&u| u));
            let recomputed = modularity(&g, &c.membership, resolution);
            prop_assert!((recomputed - c.modularity).abs() < 1e-12);
            let brute = brute_force_modularity(&g, &c.membership, resolution);
            prop_assert!((brute - c.modularity).abs() < 1e-6);
            let singletons: Vec<u32> = (0..n as u32).collect();
            prop_assert!(c.modularity >= modularity(&g, &singletons, resolution) - 1e-9);
            assert_connected(&g, &c);
            prop_assert_eq!(&c, &leiden(&g, &params));
        }
    }

    /// A timing printout: runs only with `CAIRN_TIMING=1` (best as
    /// `CAIRN_TIMING=1 cargo test --release -p cairn-search timing_leiden -- --nocapture`).
    #[test]
    fn timing_leiden() {
        use std::time::Instant;
        if std::env::var("CAIRN_TIMING").as_deref() != Ok("1") {
            eprintln!("timing_leiden: skipped (a timing printout: set CAIRN_TIMING=1 to run it)");
            return;
        }
        let n = 20_000;
        let g = Graph::from_edges(n, &random_edges(n, 100_000, 2024));
        let mut times = Vec::new();
        let mut last = None;
        for seed in 0..5 {
            let start = Instant::now();
            let c = leiden(
                &g,
                &LeidenParams {
                    seed,
                    ..LeidenParams::default()
                },
            );
            times.push(start.elapsed().as_secs_f64() * 1e3);
            last = Some(c);
        }
        times.sort_by(f64::total_cmp);
        if let Some(c) = last {
            println!(
                "leiden on {} nodes / {} edges: median {:.1} ms (min {:.1}, max {:.1}) over 5 seeds; {} communities, modularity {:.4}",
                g.node_count(),
                g.edge_count(),
                times[2],
                times[0],
                times[4],
                c.count,
                c.modularity
            );
        }
    }
}
