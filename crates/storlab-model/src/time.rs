//! The model's time: `Secs` since a run began, on whichever clock the engine
//! keeps (the simulator's virtual one, the emulator's wall clock). Its own
//! module so that buckets and pacing both use it without needing each other.

/// Seconds since the run began, on the engine's clock.
#[derive(Debug, Clone, Copy, Default, PartialEq, PartialOrd)]
pub struct Secs(pub f64);

impl Secs {
    pub const ZERO: Secs = Secs(0.0);

    #[inline]
    pub fn max(self, o: Secs) -> Secs {
        Secs(self.0.max(o.0))
    }

    /// `s` seconds later.
    #[inline]
    pub fn plus(self, s: f64) -> Secs {
        Secs(self.0 + s)
    }

    /// Seconds from `earlier` to `self`.
    #[inline]
    pub fn since(self, earlier: Secs) -> f64 {
        self.0 - earlier.0
    }
}
