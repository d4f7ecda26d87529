//! The flattened device tree (devicetree specification v0.4, chapter 5): the blob checked
//! ([`check_blob`]: every offset in bounds, names NUL-terminated, nodes balanced) and read
//! once into an arena of nodes with their paths, properties and phandles.

use std::collections::BTreeMap;

use crate::error::{one_line, PlatformError, SourcePos};

/// A node of the flattened tree, with its full path.
#[derive(Debug, Clone)]
pub(super) struct Node {
    pub(super) path: String,
    pub(super) name: String,
    pub(super) props: Vec<(String, Vec<u8>)>,
    pub(super) children: Vec<usize>,
}

/// The whole tree, read once from the blob into an arena.
#[derive(Debug)]
pub(super) struct Tree {
    pub(super) nodes: Vec<Node>,
    pub(super) phandles: BTreeMap<u32, usize>,
}

pub(super) fn err(origin: &str, node: &str, message: impl Into<String>) -> PlatformError {
    PlatformError::Invalid {
        at: SourcePos {
            origin: origin.to_string(),
            line_column: None,
        },
        message: one_line(&format!("{node}: {}", message.into())),
    }
}

impl Tree {
    pub(super) fn parse(blob: &[u8], origin: &str) -> Result<Tree, PlatformError> {
        // The fdt crate indexes the blob without bounds checks in places (a corrupt blob
        // panics it), so the structure is checked first.
        check_blob(blob).map_err(|m| {
            err(
                origin,
                "/",
                format!("not a valid flattened device tree: {m}"),
            )
        })?;
        let fdt = fdt::Fdt::new(blob)
            .map_err(|e| err(origin, "/", format!("not a flattened device tree: {e:?}")))?;
        let root = fdt
            .find_node("/")
            .ok_or_else(|| err(origin, "/", "the tree has no root node"))?;
        let mut tree = Tree {
            nodes: Vec::new(),
            phandles: BTreeMap::new(),
        };
        tree.add(root, String::from("/"), 0);
        Ok(tree)
    }

    pub(super) fn add(
        &mut self,
        n: fdt::node::FdtNode<'_, '_>,
        path: String,
        depth: usize,
    ) -> usize {
        let id = self.nodes.len();
        let props: Vec<(String, Vec<u8>)> = n
            .properties()
            .map(|p| (p.name.to_string(), p.value.to_vec()))
            .collect();
        for (k, v) in &props {
            if (k == "phandle" || k == "linux,phandle") && v.len() == 4 {
                self.phandles
                    .insert(u32::from_be_bytes([v[0], v[1], v[2], v[3]]), id);
            }
        }
        self.nodes.push(Node {
            path: path.clone(),
            name: if depth == 0 {
                String::from("/")
            } else {
                n.name.to_string()
            },
            props,
            children: Vec::new(),
        });
        if depth < 64 {
            for c in n.children() {
                let cp = if path == "/" {
                    format!("/{}", c.name)
                } else {
                    format!("{path}/{}", c.name)
                };
                let cid = self.add(c, cp, depth + 1);
                self.nodes[id].children.push(cid);
            }
        }
        id
    }

    pub(super) fn prop(&self, n: usize, name: &str) -> Option<&[u8]> {
        self.nodes[n]
            .props
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_slice())
    }

    pub(super) fn has(&self, n: usize, name: &str) -> bool {
        self.prop(n, name).is_some()
    }

    pub(super) fn cells(&self, n: usize, name: &str) -> Option<Vec<u32>> {
        self.prop(n, name).map(|v| {
            v.chunks_exact(4)
                .map(|c| u32::from_be_bytes([c[0], c[1], c[2], c[3]]))
                .collect()
        })
    }

    pub(super) fn u32(&self, n: usize, name: &str) -> Option<u32> {
        self.cells(n, name).and_then(|c| c.first().copied())
    }

    pub(super) fn string(&self, n: usize, name: &str) -> Option<String> {
        self.prop(n, name).map(|v| {
            let first = v.split(|&b| b == 0).next().unwrap_or(&[]);
            String::from_utf8_lossy(first).into_owned()
        })
    }

    pub(super) fn child(&self, n: usize, name: &str) -> Option<usize> {
        self.nodes[n]
            .children
            .iter()
            .copied()
            .find(|&c| self.nodes[c].name == name)
    }

    pub(super) fn find(&self, path: &str) -> Option<usize> {
        self.nodes.iter().position(|n| n.path == path)
    }

    pub(super) fn path(&self, n: usize) -> &str {
        &self.nodes[n].path
    }

    pub(super) fn disabled(&self, n: usize) -> bool {
        self.string(n, "status")
            .is_some_and(|s| s != "okay" && s != "ok")
    }

    /// Follow a phandle, or say which node points to nowhere.
    pub(super) fn phandle(
        &self,
        from: usize,
        prop: &str,
        ph: u32,
        origin: &str,
    ) -> Result<usize, PlatformError> {
        self.phandles.get(&ph).copied().ok_or_else(|| {
            err(
                origin,
                self.path(from),
                format!(
                    "`{prop}` refers to phandle {ph:#x}, which no node has (a phandle to nowhere)"
                ),
            )
        })
    }
}

fn be32(b: &[u8], at: usize) -> Option<u32> {
    b.get(at..at.checked_add(4)?)
        .map(|x| u32::from_be_bytes([x[0], x[1], x[2], x[3]]))
}

/// Check a flattened device tree's header and walk its structure block (devicetree
/// specification v0.4, chapter 5): every offset in bounds, names and property names
/// NUL-terminated UTF-8, nodes balanced, ending in FDT_END.
fn check_blob(b: &[u8]) -> Result<(), String> {
    let h = |i: usize| be32(b, i * 4).map(|v| v as usize).ok_or("truncated header");
    if h(0)? != 0xd00d_feed {
        return Err("bad magic".into());
    }
    let total = h(1)?;
    let (off_struct, off_strings, version) = (h(2)?, h(3)?, h(5)?);
    let (size_strings, size_struct) = (h(8)?, h(9)?);
    if total > b.len() || version < 17 {
        return Err(format!(
            "total size {total} > {} bytes, or version {version} < 17",
            b.len()
        ));
    }
    let end_struct = off_struct.checked_add(size_struct).filter(|&e| e <= total);
    let end_strings = off_strings
        .checked_add(size_strings)
        .filter(|&e| e <= total);
    let (Some(end_struct), Some(end_strings)) = (end_struct, end_strings) else {
        return Err("a block lies outside the blob".into());
    };
    let strings = &b[off_strings..end_strings];
    let cstr = |bytes: &[u8]| -> Option<usize> {
        let n = bytes.iter().position(|&c| c == 0)?;
        std::str::from_utf8(&bytes[..n]).ok().map(|_| n)
    };
    let mut at = off_struct;
    // per open node: whether a child node has been seen (the fdt crate panics on a
    // property after a child, which the format forbids, and on FDT_NOP between them)
    let mut open: Vec<bool> = Vec::new();
    let pad = |x: usize| x.checked_add(3).map(|y| y & !3);
    loop {
        let tok = be32(&b[..end_struct], at).ok_or("structure block ends without FDT_END")?;
        at += 4;
        match tok {
            1 => {
                let n = cstr(&b[at..end_struct]).ok_or("bad node name")?;
                at = pad(at + n + 1).ok_or("overflow")?;
                if let Some(seen_child) = open.last_mut() {
                    *seen_child = true;
                }
                open.push(false);
            }
            2 => {
                open.pop().ok_or("unbalanced FDT_END_NODE")?;
            }
            3 if open.last() == Some(&true) => {
                return Err(format!(
                    "a property after a child node at offset {} (properties come first)",
                    at - 4
                ))
            }
            3 => {
                let len = be32(&b[..end_struct], at).ok_or("truncated property")? as usize;
                let nameoff = be32(&b[..end_struct], at + 4).ok_or("truncated property")? as usize;
                strings
                    .get(nameoff..)
                    .and_then(cstr)
                    .ok_or("bad property name offset")?;
                let end = (at + 8).checked_add(len).filter(|&e| e <= end_struct);
                at = pad(end.ok_or("property value outside the structure block")?)
                    .ok_or("overflow")?;
            }
            4 => {
                return Err(format!(
                    "FDT_NOP at offset {} (not supported; dtc does not write it)",
                    at - 4
                ))
            }
            9 if open.is_empty() => return Ok(()),
            _ => return Err(format!("bad token {tok:#x} at offset {}", at - 4)),
        }
        if at > end_struct {
            return Err("structure block overrun".into());
        }
    }
}
