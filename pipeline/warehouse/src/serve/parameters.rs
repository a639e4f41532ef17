//! A prepared statement's plan with the values its client bound, as datafusion-postgres 0.19 will
//! plan it at Execute. A statement of the extended protocol is parsed and vetted at Parse, when
//! its parameters are placeholders; their values arrive at Bind, and what they let the optimiser
//! fold (`levenshtein($1, $2)` of two 150,000-character strings: about a minute) is computed
//! where datafusion-postgres plans the statement at Execute, on a worker of the server that
//! nothing stops. So the [`super::planner::Planner`] plans this plan first, by the statement's
//! deadline.
//!
//! The values are decoded here exactly as datafusion-postgres decodes them (its helpers are
//! private; this follows `handlers::parameter_wire_types` and `planner::
//! get_inferred_parameter_types` of 0.19.0, without pgvector, which is not built): the client's
//! own type of each parameter first, then the server's, then DataFusion's inferred one. Whatever
//! fails here fails there before the plan is optimised, so a failure here is left to
//! datafusion-postgres to answer in its words.

use std::collections::HashMap;

use datafusion::arrow::datatypes::DataType;
use datafusion::common::tree_node::{TreeNode, TreeNodeRecursion};
use datafusion::logical_expr::{Expr, LogicalPlan};
use datafusion_postgres::arrow_pg::datatypes::df::deserialize_parameters_with_server_types;
use datafusion_postgres::arrow_pg::datatypes::{
    PG_OID_ALIAS_KEY, into_pg_type, pg_type_for_alias_kind,
};
use datafusion_postgres::pgwire::api::Type;
use datafusion_postgres::pgwire::api::portal::Portal;
use datafusion_postgres::pgwire::api::query::ExtendedQueryHandler;

/// datafusion-postgres' prepared statement: its text, and its parsed statement and plan.
pub type Statement = <datafusion_postgres::DfSessionService as ExtendedQueryHandler>::Statement;

/// `portal`'s plan with its parameters' values in (the plan as it is when it binds none), or
/// `None` when it has no plan or its values cannot be put in (datafusion-postgres refuses it
/// too). A plan without parameters is planned here again all the same: its vet at Parse reads
/// the whole text with DataFusion's parser, which refuses some texts datafusion-postgres' own
/// parser accepts (`SELECT …; COPY jobs TO STDOUT`, of which it plans the first statement).
pub fn bound_plan(portal: &Portal<Statement>) -> Option<LogicalPlan> {
    let (_, Some((_, plan))) = &portal.statement.statement else {
        return None;
    };
    if portal.parameter_len() == 0 {
        return Some(plan.clone());
    }
    let parameters = ordered(inferred_types(plan).ok()?);
    let overrides = oid_overrides(plan);
    let inferred: Vec<Option<&DataType>> = parameters.iter().map(|(_, t)| t.as_ref()).collect();
    let wire: Vec<Type> = parameters
        .iter()
        .map(|(id, datatype)| match (overrides.get(id), datatype) {
            (Some(ty), _) => Ok(ty.clone()),
            (None, Some(datatype)) => into_pg_type(datatype),
            (None, None) => Ok(Type::UNKNOWN),
        })
        .collect::<Result<_, _>>()
        .ok()?;
    let wire: Vec<Option<&Type>> = wire.iter().map(Some).collect();
    let values = deserialize_parameters_with_server_types(portal, &inferred, &wire).ok()?;
    plan.clone().replace_params_with_values(&values).ok()
}

/// Each placeholder's type: what DataFusion inferred, or else the type it is cast to.
fn inferred_types(
    plan: &LogicalPlan,
) -> datafusion::error::Result<HashMap<String, Option<DataType>>> {
    let mut types = plan.get_parameter_types()?;
    let mut cast_to = HashMap::new();
    plan.apply(|node| {
        for expr in node.expressions() {
            let _ = expr.apply(|e| {
                if let Expr::Cast(cast) = e
                    && let Expr::Placeholder(placeholder) = &*cast.expr
                {
                    // The last cast met wins, as in datafusion-postgres.
                    cast_to.insert(placeholder.id.clone(), cast.field.data_type().clone());
                }
                Ok(TreeNodeRecursion::Continue)
            });
        }
        Ok(TreeNodeRecursion::Continue)
    })?;
    for (id, datatype) in &mut types {
        if datatype.is_none() {
            *datatype = cast_to.get(id).cloned();
        }
    }
    Ok(types)
}

/// The placeholders in their positions (`$1`, `$2`, ...).
fn ordered(types: HashMap<String, Option<DataType>>) -> Vec<(String, Option<DataType>)> {
    let mut entries: Vec<_> = types.into_iter().collect();
    entries.sort_by_key(|(id, _)| {
        id.trim_start_matches('$')
            .parse::<u32>()
            .unwrap_or(u32::MAX)
    });
    entries
}

/// Placeholders compared with a catalogue's `oid` column, which clients bind as `oid`.
fn oid_overrides(plan: &LogicalPlan) -> HashMap<String, Type> {
    let mut overrides = HashMap::new();
    let _ = plan.apply(|node| {
        for expr in node.expressions() {
            let _ = expr.apply(|e| {
                let placeholder = match e {
                    Expr::Placeholder(p) => Some(p),
                    Expr::Cast(cast) => match &*cast.expr {
                        Expr::Placeholder(p) => Some(p),
                        _ => None,
                    },
                    _ => None,
                };
                if let Some(placeholder) = placeholder
                    && let Some(field) = placeholder.field.as_deref()
                    && field.data_type() == &DataType::Int32
                    && let Some(kind) = field.metadata().get(PG_OID_ALIAS_KEY)
                    && let Some(ty) = pg_type_for_alias_kind(kind)
                {
                    overrides.insert(placeholder.id.clone(), ty);
                }
                Ok(TreeNodeRecursion::Continue)
            });
        }
        Ok(TreeNodeRecursion::Continue)
    });
    overrides
}
