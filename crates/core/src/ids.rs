//! Small copyable identifiers for nodes, links and flows (indices into the simulator's tables).

use serde::{Deserialize, Serialize};

macro_rules! id_type {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
        pub struct $name(pub u32);

        impl $name {
            /// The identifier as an index into a table.
            #[inline]
            pub const fn index(self) -> usize {
                self.0 as usize
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(f, "{}", self.0)
            }
        }
    };
}

id_type!(
    /// A node (host or router) of a topology.
    NodeId
);
id_type!(
    /// A one-way link between two nodes.
    LinkId
);
id_type!(
    /// A flow: a sender endpoint and its receiver endpoint.
    FlowId
);
