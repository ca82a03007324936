//! Why an emulation could not start or finish, one clear line each.

/// Why an emulation could not start or finish.
#[derive(Debug, thiserror::Error)]
pub enum EmuError {
    /// What the emulator needs is missing on this machine (root, veth or TUN, network namespaces,
    /// `ip`): the message names it.
    #[error("the emulator cannot run here: {0}")]
    Unavailable(String),
    /// The scenario holds something the emulator does not run.
    #[error("{0}")]
    Unsupported(String),
    /// A set-up step failed.
    #[error("cannot {step}: {detail}")]
    Setup {
        /// What was being done.
        step: String,
        /// Why it failed.
        detail: String,
    },
    /// A flow's endpoint failed while running.
    #[error("flow `{flow}`: {detail}")]
    Flow {
        /// The flow.
        flow: String,
        /// What happened.
        detail: String,
    },
    /// The forwarder failed.
    #[error("the emulator's forwarder failed: {0}")]
    Forwarder(String),
}

impl EmuError {
    /// A set-up step that failed.
    pub fn setup(step: impl Into<String>, detail: impl ToString) -> Self {
        Self::Setup {
            step: step.into(),
            detail: detail.to_string(),
        }
    }
}
