//! `suppressions`: findings accepted with a reason.

use super::read::{first_column, missing};
use crate::blueprint::decode::Decoder;
use crate::blueprint::field::{Field, Ty};
use crate::blueprint::*;
use crate::syntax::Node;

pub(in crate::blueprint) const SUPPRESSION_FIELDS: &[Field] = &[
    Field::new("id", Ty::STRING, "A finding ID, e.g. W5002"),
    Field::new("reason", Ty::STRING, "Why the finding is accepted"),
];

pub(super) fn decode_suppressions(d: &mut Decoder, node: &Node) -> Vec<Suppression> {
    let mut out = Vec::new();
    for item in d.list("suppressions", node) {
        let Some(mut f) = d.fields("suppressions[]", item, SUPPRESSION_FIELDS) else {
            continue;
        };
        let id = f.get("id").and_then(|n| d.string("suppressions[].id", n));
        let reason = f
            .get("reason")
            .and_then(|n| d.string("suppressions[].reason", n));
        f.finish(d, "a suppression");
        // A field given a value that did not decode was reported there.
        let (id_given, reason_given) = (f.given("id"), f.given("reason"));
        match (id, reason) {
            (Some(_), None) if reason_given => {}
            (Some(id), Some(reason)) if !reason.value.trim().is_empty() => out.push(Suppression {
                id,
                reason: reason.value,
            }),
            (Some(id), _) => {
                let message = format!("suppression of `{}` has no reason", id.value);
                d.error(id.span, message).help =
                    Some("say why the finding is accepted: `reason: ...`".into());
            }
            (None, _) if id_given => {}
            (None, _) => missing(
                d,
                first_column(item.span),
                "id",
                "suppression",
                "the finding ID, e.g. `id: W5002`",
            ),
        }
    }
    out
}
