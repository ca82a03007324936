//! Static shortest-path routing: a path with the fewest hops from a source to a destination.
//! Ties go to the link added first, so routes are deterministic.
//!
//! A path is read off a breadth-first search backwards from the destination. Hosts that hang off
//! one router (a node with a single outgoing link, or a destination with a single incoming one)
//! are routed through that router, so every flow of a dumbbell or parking lot, whatever its
//! hosts, shares the search of its destination's router. Each search covers the whole graph once
//! and is kept (up to [`TREE_BUDGET`] entries in all; past that a search stops when it reaches
//! its source and is not kept), so routing `F` flows costs `O(R · (N + L) + F · hops)` for `R`
//! distinct destination routers, `N` nodes and `L` links, and nothing of size nodes² is held.

use std::cell::RefCell;
use std::collections::{HashMap, VecDeque};

use fairstream_core::{LinkId, NodeId};

/// Most next-hop entries the kept searches hold in all (4 bytes each: 16 MiB).
pub const TREE_BUDGET: usize = 1 << 22;

/// No next hop (the destination itself, or a node that cannot reach it).
const NONE: u32 = u32::MAX;

/// A route finder over `n` nodes joined by one-way links.
#[derive(Clone)]
pub struct Routes {
    /// Incoming links of each node as `(link, from)`, in link order.
    incoming: Vec<Vec<(LinkId, NodeId)>>,
    /// Each node's outgoing link, if it has exactly one.
    only_out: Vec<Option<LinkId>>,
    /// Each link's far node.
    to: Vec<NodeId>,
    /// Kept searches: for a destination, the first link of a fewest-hop path from every node.
    trees: RefCell<HashMap<NodeId, Box<[u32]>>>,
}

/// The graph, without the kept searches (a cache, whose order is a hash map's).
impl std::fmt::Debug for Routes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Routes")
            .field("incoming", &self.incoming)
            .field("only_out", &self.only_out)
            .field("to", &self.to)
            .finish_non_exhaustive()
    }
}

impl Routes {
    /// A route finder for `n` nodes joined by one-way `links` given as `(from, to)`.
    pub fn compute(n: usize, links: &[(NodeId, NodeId)]) -> Self {
        let mut incoming: Vec<Vec<(LinkId, NodeId)>> = vec![Vec::new(); n];
        let mut out_count = vec![0u32; n];
        let mut only_out = vec![None; n];
        for (i, &(from, to)) in links.iter().enumerate() {
            let link = LinkId(i as u32);
            incoming[to.index()].push((link, from));
            out_count[from.index()] += 1;
            only_out[from.index()] = Some(link);
        }
        for (out, count) in only_out.iter_mut().zip(out_count) {
            if count != 1 {
                *out = None;
            }
        }
        Self {
            incoming,
            only_out,
            to: links.iter().map(|&(_, to)| to).collect(),
            trees: RefCell::new(HashMap::new()),
        }
    }

    /// The first link of a fewest-hop path towards `dst` from every node the backward search
    /// from `dst` discovers; with `stop_at`, the search ends once it discovers that node (the
    /// entries of the nodes discovered before it are the same as in a full search).
    fn search(&self, dst: NodeId, stop_at: Option<NodeId>) -> Box<[u32]> {
        let n = self.incoming.len();
        let mut next = vec![NONE; n].into_boxed_slice();
        let mut seen = vec![false; n];
        let mut frontier = VecDeque::new();
        seen[dst.index()] = true;
        frontier.push_back(dst.index());
        while let Some(v) = frontier.pop_front() {
            for &(link, from) in &self.incoming[v] {
                let u = from.index();
                if !seen[u] {
                    seen[u] = true;
                    next[u] = link.0;
                    if Some(from) == stop_at {
                        return next;
                    }
                    frontier.push_back(u);
                }
            }
        }
        next
    }

    /// Follows `next` from `src` to `dst`, appending the links to `path`.
    fn follow(&self, next: &[u32], src: NodeId, dst: NodeId, path: &mut Vec<LinkId>) -> Option<()> {
        let mut at = src;
        while at != dst {
            let link = next[at.index()];
            if link == NONE {
                return None;
            }
            path.push(LinkId(link));
            at = self.to[link as usize];
        }
        Some(())
    }

    /// A fewest-hop path between two nodes, through a kept search of `dst` when the budget
    /// allows.
    fn core_path(&self, src: NodeId, dst: NodeId, path: &mut Vec<LinkId>) -> Option<()> {
        if let Some(next) = self.trees.borrow().get(&dst) {
            return self.follow(next, src, dst, path);
        }
        let kept: usize = self.trees.borrow().values().map(|t| t.len()).sum();
        if kept + self.incoming.len() > TREE_BUDGET {
            let next = self.search(dst, Some(src));
            return self.follow(&next, src, dst, path);
        }
        let next = self.search(dst, None);
        let found = self.follow(&next, src, dst, path);
        self.trees.borrow_mut().insert(dst, next);
        found
    }

    /// The links of a fewest-hop path from `src` to `dst` (empty if they are the same node),
    /// or `None` if there is no path.
    ///
    /// A destination with one incoming link, from `p`, is reached through `p`: the backward
    /// search from it first finds `p` and then runs as the search from `p` does. A source with
    /// one outgoing link, to `q`, leaves through `q`: the search finds it only from `q`. Both
    /// give the path the search from `dst` itself would, tie for tie.
    pub fn path(&self, src: NodeId, dst: NodeId) -> Option<Vec<LinkId>> {
        if src == dst {
            return Some(Vec::new());
        }
        let (mut core_src, mut core_dst) = (src, dst);
        let mut suffix = None;
        if let [(link, p)] = self.incoming[dst.index()][..] {
            if p == src {
                return Some(vec![link]);
            }
            core_dst = p;
            suffix = Some(link);
        }
        let mut path = Vec::new();
        if let Some(link) = self.only_out[src.index()] {
            path.push(link);
            core_src = self.to[link.index()];
        }
        if core_src != core_dst {
            self.core_path(core_src, core_dst, &mut path)?;
        }
        path.extend(suffix);
        Some(path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fewest_hops_wins_and_unreachable_is_none() {
        // 0 -> 1 -> 2 and a direct 0 -> 2; 3 is isolated.
        let links = [
            (NodeId(0), NodeId(1)),
            (NodeId(1), NodeId(2)),
            (NodeId(0), NodeId(2)),
        ];
        let r = Routes::compute(4, &links);
        assert_eq!(r.path(NodeId(0), NodeId(2)), Some(vec![LinkId(2)]));
        assert_eq!(r.path(NodeId(0), NodeId(1)), Some(vec![LinkId(0)]));
        assert_eq!(r.path(NodeId(2), NodeId(0)), None);
        assert_eq!(r.path(NodeId(0), NodeId(3)), None);
        assert_eq!(r.path(NodeId(1), NodeId(0)), None);
        assert_eq!(r.path(NodeId(1), NodeId(1)), Some(vec![]));
    }

    #[test]
    fn equal_length_paths_go_through_the_link_added_first() {
        // Two two-hop paths 0 -> 1 -> 3 and 0 -> 2 -> 3; the one whose last link was added
        // first wins, as the backward search from the destination meets it first.
        let links = [
            (NodeId(0), NodeId(2)),
            (NodeId(0), NodeId(1)),
            (NodeId(1), NodeId(3)),
            (NodeId(2), NodeId(3)),
        ];
        let r = Routes::compute(4, &links);
        assert_eq!(
            r.path(NodeId(0), NodeId(3)),
            Some(vec![LinkId(1), LinkId(2)])
        );
    }

    /// The search of every path from scratch, as routes were found before searches were kept
    /// and hosts routed through their routers: what [`Routes::path`] must agree with.
    fn reference_path(r: &Routes, src: NodeId, dst: NodeId) -> Option<Vec<LinkId>> {
        if src == dst {
            return Some(Vec::new());
        }
        let next = r.search(dst, Some(src));
        let mut path = Vec::new();
        r.follow(&next, src, dst, &mut path)?;
        Some(path)
    }

    #[test]
    fn paths_agree_with_a_search_per_path_on_random_graphs() {
        let mut rng = fairstream_core::RngStream::from_seed(7);
        let mut pick = |n: usize| (rng.uniform() * n as f64) as usize % n;
        for _ in 0..300 {
            let n = 2 + pick(12);
            let mut links = Vec::new();
            for _ in 0..pick(3 * n) {
                let (a, b) = (pick(n), pick(n));
                if a != b {
                    links.push((NodeId(a as u32), NodeId(b as u32)));
                    if pick(3) > 0 {
                        links.push((NodeId(b as u32), NodeId(a as u32)));
                    }
                }
            }
            let r = Routes::compute(n, &links);
            for a in 0..n {
                for b in 0..n {
                    let (a, b) = (NodeId(a as u32), NodeId(b as u32));
                    assert_eq!(
                        r.path(a, b),
                        reference_path(&r, a, b),
                        "{links:?}: {a:?} -> {b:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn a_dumbbell_of_many_hosts_routes_through_two_searches() {
        // Hosts 0..h on the left, h..2h on the right, routers 2h and 2h + 1.
        let h = 50_000u32;
        let (rl, rr) = (NodeId(2 * h), NodeId(2 * h + 1));
        let mut links = vec![(rl, rr), (rr, rl)];
        for i in 0..h {
            links.extend([(NodeId(i), rl), (rl, NodeId(i))]);
            links.extend([(rr, NodeId(h + i)), (NodeId(h + i), rr)]);
        }
        let r = Routes::compute(2 * h as usize + 2, &links);
        for i in 0..h {
            let (a, b) = (NodeId(i), NodeId(h + i));
            assert_eq!(r.path(a, b).map(|p| p.len()), Some(3));
            assert_eq!(r.path(b, a).map(|p| p.len()), Some(3));
        }
        assert_eq!(r.trees.borrow().len(), 2, "one search per router");
        assert_eq!(
            r.path(NodeId(0), NodeId(7)),
            reference_path(&r, NodeId(0), NodeId(7))
        );
    }
}
