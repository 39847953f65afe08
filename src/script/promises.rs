//! Promise rejections nobody handled. scry runs a chunk's promise jobs before it answers and
//! runs nothing between chunks, so a rejection without a handler at the end of a chunk is an
//! error that would otherwise vanish (`Promise.reject(e); 1` answered `ok`).

use std::cell::RefCell;
use std::rc::Rc;

use rquickjs::{Ctx, Persistent, Runtime, Value};

/// Rejected promises without a handler yet: (promise, reason), in rejection order.
#[derive(Default)]
pub(super) struct Unhandled {
    list: RefCell<Vec<(Persistent<Value<'static>>, Persistent<Value<'static>>)>>,
}

impl Unhandled {
    /// Tracks rejections on `runtime` from now on.
    pub(super) fn install(runtime: &Runtime) -> Rc<Unhandled> {
        let ledger = Rc::new(Unhandled::default());
        let seen = ledger.clone();
        runtime.set_host_promise_rejection_tracker(Some(Box::new(
            move |ctx: Ctx<'_>, promise: Value<'_>, reason: Value<'_>, handled: bool| {
                let mut list = seen.list.borrow_mut();
                if handled {
                    // A handler came later: that rejection is someone's business after all.
                    list.retain(|(p, _)| p.clone().restore(&ctx).ok().as_ref() != Some(&promise));
                } else {
                    list.push((
                        Persistent::save(&ctx, promise),
                        Persistent::save(&ctx, reason),
                    ));
                }
            },
        )));
        ledger
    }

    /// The reason of the first rejection still unhandled, and how many there are; clears the
    /// list (its values must not outlive the chunk: they belong to the runtime).
    pub(super) fn take<'js>(&self, ctx: &Ctx<'js>) -> Option<(Value<'js>, usize)> {
        let list = std::mem::take(&mut *self.list.borrow_mut());
        let count = list.len();
        let (_, reason) = list.into_iter().next()?;
        Some((reason.restore(ctx).ok()?, count))
    }

    /// Drops whatever is left without looking at it.
    pub(super) fn clear(&self) {
        self.list.borrow_mut().clear();
    }
}
