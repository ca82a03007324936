//! Static shortest-path routing: a path with the fewest hops from a source to a destination.
//! Ties go to the link added first, so routes are deterministic.
//!
//! Paths are found per flow, when a run is built, by a breadth-first search backwards from the
//! destination that stops when it reaches the source; nothing of size nodes² is kept, so a
//! topology with thousands of hosts routes in memory proportional to its links.

use std::collections::VecDeque;

use fairstream_core::{LinkId, NodeId};

/// A route finder over `n` nodes joined by one-way links.
#[derive(Debug, Clone)]
pub struct Routes {
    /// Incoming links of each node as `(link, from)`, in link order.
    incoming: Vec<Vec<(LinkId, NodeId)>>,
    /// Each link's far node.
    to: Vec<NodeId>,
}

impl Routes {
    /// A route finder for `n` nodes joined by one-way `links` given as `(from, to)`.
    pub fn compute(n: usize, links: &[(NodeId, NodeId)]) -> Self {
        let mut incoming: Vec<Vec<(LinkId, NodeId)>> = vec![Vec::new(); n];
        for (i, &(from, to)) in links.iter().enumerate() {
            incoming[to.index()].push((LinkId(i as u32), from));
        }
        Self {
            incoming,
            to: links.iter().map(|&(_, to)| to).collect(),
        }
    }

    /// The first link of a fewest-hop path from every node discovered so far towards `dst`,
    /// searching backwards from `dst` until `src` is reached (or everything is).
    fn first_links(&self, src: NodeId, dst: NodeId) -> Vec<Option<LinkId>> {
        let n = self.incoming.len();
        let mut next = vec![None; n];
        let mut seen = vec![false; n];
        let mut frontier = VecDeque::new();
        seen[dst.index()] = true;
        frontier.push_back(dst.index());
        while let Some(v) = frontier.pop_front() {
            for &(link, from) in &self.incoming[v] {
                let u = from.index();
                if !seen[u] {
                    seen[u] = true;
                    next[u] = Some(link);
                    if u == src.index() {
                        return next;
                    }
                    frontier.push_back(u);
                }
            }
        }
        next
    }

    /// The links of a fewest-hop path from `src` to `dst` (empty if they are the same node),
    /// or `None` if there is no path.
    pub fn path(&self, src: NodeId, dst: NodeId) -> Option<Vec<LinkId>> {
        if src == dst {
            return Some(Vec::new());
        }
        let next = self.first_links(src, dst);
        let mut at = src;
        let mut path = Vec::new();
        while at != dst {
            let link = next[at.index()]?;
            path.push(link);
            at = self.to[link.index()];
        }
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
}
