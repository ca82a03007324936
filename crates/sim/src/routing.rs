//! Static shortest-path routing: for every (node, destination) the first link of a path with
//! the fewest hops. Ties go to the link added first, so routes are deterministic.

use std::collections::VecDeque;

use fairstream_core::{LinkId, NodeId};

/// A next-hop table over `n` nodes.
#[derive(Debug, Clone)]
pub struct Routes {
    n: usize,
    next: Vec<Option<LinkId>>,
}

impl Routes {
    /// Computes routes for `n` nodes joined by one-way `links` given as `(from, to)`.
    pub fn compute(n: usize, links: &[(NodeId, NodeId)]) -> Self {
        let mut next = vec![None; n * n];
        // Incoming links of each node, in link order, for a backwards search from each destination.
        let mut incoming: Vec<Vec<(usize, NodeId)>> = vec![Vec::new(); n];
        for (i, &(from, to)) in links.iter().enumerate() {
            incoming[to.index()].push((i, from));
        }
        let mut dist = vec![u32::MAX; n];
        let mut frontier = VecDeque::new();
        for dst in 0..n {
            dist.fill(u32::MAX);
            dist[dst] = 0;
            frontier.clear();
            frontier.push_back(dst);
            while let Some(v) = frontier.pop_front() {
                for &(link, from) in &incoming[v] {
                    let u = from.index();
                    if dist[u] == u32::MAX {
                        dist[u] = dist[v] + 1;
                        next[u * n + dst] = Some(LinkId(link as u32));
                        frontier.push_back(u);
                    }
                }
            }
        }
        Self { n, next }
    }

    /// The link to take from `at` towards `dst` (`None` if unreachable or already there).
    #[inline]
    pub fn next_hop(&self, at: NodeId, dst: NodeId) -> Option<LinkId> {
        self.next[at.index() * self.n + dst.index()]
    }

    /// The links of the path from `src` to `dst`, or `None` if there is no path.
    pub fn path(
        &self,
        src: NodeId,
        dst: NodeId,
        links: &[(NodeId, NodeId)],
    ) -> Option<Vec<LinkId>> {
        let mut at = src;
        let mut path = Vec::new();
        while at != dst {
            let link = self.next_hop(at, dst)?;
            path.push(link);
            at = links[link.index()].1;
            if path.len() > self.n {
                return None;
            }
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
        assert_eq!(r.next_hop(NodeId(0), NodeId(2)), Some(LinkId(2)));
        assert_eq!(r.next_hop(NodeId(0), NodeId(1)), Some(LinkId(0)));
        assert_eq!(r.next_hop(NodeId(2), NodeId(0)), None);
        assert_eq!(r.next_hop(NodeId(0), NodeId(3)), None);
        assert_eq!(r.path(NodeId(0), NodeId(2), &links), Some(vec![LinkId(2)]));
        assert_eq!(r.path(NodeId(1), NodeId(0), &links), None);
    }
}
