//! Destructuring: binding a value to a pattern, in declarations
//! (`declare`: the names are new bindings whose locations are already set
//! up) and in assignments (the names are existing variables or member
//! expressions).

use super::codegen::{Access, Codegen};
use crate::builtins::GLOBAL_NAMES;
use crate::bytecode::*;
use crate::syntax::ast::*;

impl<'a> Codegen<'a> {
    pub(crate) fn bind_pattern(&mut self, p: &'a Pattern, src: Reg, declare: bool) {
        let pos = p.span.start;
        match &p.kind {
            PatternKind::Ident(i) => {
                if declare {
                    self.init_decl(i, src);
                } else {
                    let a = self.ident_access(i);
                    self.store_access(a, src, i.span.start);
                }
            }
            PatternKind::Expr(e) => self.store_to_expr(e, src),
            PatternKind::Array { elems, rest } => {
                // Any iterable destructures: a non-array is first collected
                // into an array (in place: `src` is always a register the
                // pattern owns).
                let m = self.mark();
                let t = self.alloc();
                let array_slot = GLOBAL_NAMES.iter().position(|n| *n == "Array").unwrap_or(0) as u32;
                self.emit(Instr::GetGlobal { dst: t, idx: array_slot }, pos);
                self.emit(Instr::InstanceOf { dst: t, a: src, b: t }, pos);
                let skip = self.emit(Instr::JmpIfTrue { cond: t, off: 0 }, pos);
                let take = if rest.is_some() { u16::MAX } else { elems.len().min(u16::MAX as usize - 1) as u16 };
                self.emit(Instr::ArrayRest { dst: src, src, start: 0, take }, pos);
                self.patch_here(skip);
                self.free_to(m);
                for (i, el) in elems.iter().enumerate() {
                    let Some(el) = el else { continue };
                    let m = self.mark();
                    let direct = self.pattern_reg(&el.pattern, declare);
                    let t = match direct {
                        Some(r) => r,
                        None => self.alloc(),
                    };
                    let k = self.alloc();
                    self.load_number(k, i as f64, el.pattern.span.start);
                    self.emit(Instr::GetIndex { dst: t, obj: src, key: k }, el.pattern.span.start);
                    if let Some(d) = &el.default {
                        self.apply_default(t, d, ident_name(&el.pattern));
                    }
                    if direct.is_none() {
                        self.bind_pattern(&el.pattern, t, declare);
                    }
                    self.free_to(m);
                }
                if let Some(r) = rest {
                    let m = self.mark();
                    let t = self.alloc();
                    let start = elems.len().min(u16::MAX as usize) as u16;
                    self.emit(Instr::ArrayRest { dst: t, src, start, take: u16::MAX }, r.span.start);
                    self.bind_pattern(r, t, declare);
                    self.free_to(m);
                }
            }
            PatternKind::Object { props, rest } => {
                let m = self.mark();
                // With a rest pattern, the keys taken so far are collected.
                let excluded = rest.as_ref().map(|_| {
                    let ex = self.alloc();
                    self.emit(Instr::NewArray { dst: ex, cap: props.len().min(u16::MAX as usize) as u16 }, pos);
                    ex
                });
                for pr in props {
                    let m2 = self.mark();
                    let direct = self.pattern_reg(&pr.value, declare);
                    let t = match direct {
                        Some(r) => r,
                        None => self.alloc(),
                    };
                    let kpos = match &pr.key {
                        PropKey::Named(_, s) | PropKey::Number(_, s) | PropKey::Private(_, s) => s.start,
                        PropKey::Computed(e) => e.span.start,
                    };
                    match &pr.key {
                        PropKey::Computed(ke) => {
                            let rk = self.expr_temp(ke);
                            self.emit(Instr::GetIndex { dst: t, obj: src, key: rk }, kpos);
                            if let Some(ex) = excluded {
                                self.emit(Instr::ArrayPush { arr: ex, src: rk }, kpos);
                            }
                        }
                        key => {
                            let k = self.key_const(key).unwrap_or(0);
                            self.emit(Instr::GetProp { dst: t, obj: src, name: k }, kpos);
                            if let Some(ex) = excluded {
                                let ks = self.alloc();
                                self.emit(Instr::LoadK { dst: ks, k }, kpos);
                                self.emit(Instr::ArrayPush { arr: ex, src: ks }, kpos);
                            }
                        }
                    }
                    if let Some(d) = &pr.default {
                        self.apply_default(t, d, ident_name(&pr.value));
                    }
                    if direct.is_none() {
                        self.bind_pattern(&pr.value, t, declare);
                    }
                    self.free_to(m2);
                }
                if let (Some(r), Some(ex)) = (rest, excluded) {
                    let t = self.alloc();
                    self.emit(Instr::ObjectRest { dst: t, src, excluded: ex }, r.span.start);
                    self.bind_pattern(r, t, declare);
                }
                self.free_to(m);
            }
        }
    }

    /// The register of a pattern that is a plain uncaptured local, so the
    /// element can be loaded straight into it.
    fn pattern_reg(&mut self, p: &'a Pattern, declare: bool) -> Option<Reg> {
        let PatternKind::Ident(i) = &p.kind else { return None };
        let a = if declare {
            let id = self.decl_id(i)?;
            self.access(id)
        } else {
            self.ident_access(i)
        };
        match a {
            Access::Reg(r) => Some(r),
            _ => None,
        }
    }
}

fn ident_name(p: &Pattern) -> Option<&str> {
    match &p.kind {
        PatternKind::Ident(i) => Some(&i.name),
        _ => None,
    }
}
