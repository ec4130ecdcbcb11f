//! Workspaces and namespace directories of a nanobot instance.
//!
//! ```text
//! .nanobot*/sessions/<workspace-id>/.workspace     "<abs workspace path>\n" (project_path)
//! .nanobot*/<workspace>/.nanobot/workspace-id      "<32 hex>\n"
//! .nanobot*/<workspace>/memory/                    a workspace holds memory/ or .nanobot/workspace-id
//! ```

use std::path::Path;

/// Directories of an instance that are never workspaces.
const NOT_WORKSPACES: [&str; 4] = ["sessions", "webui", "history", "logs"];

/// Whether `dir` (absolute) is a nanobot workspace.
pub fn is_workspace_dir(dir: &Path) -> bool {
    let name = dir.file_name().and_then(|n| n.to_str()).unwrap_or("");
    !NOT_WORKSPACES.contains(&name)
        && (dir.join("memory").is_dir() || dir.join(".nanobot/workspace-id").is_file())
}

/// For a path `.nanobot*/<workspace>/…`: whether `<workspace>` is a workspace.
pub fn is_workspace_file(rel: &str, home: &Path) -> bool {
    let mut parts = rel.split('/');
    match (parts.next(), parts.next()) {
        (Some(inst), Some(ws)) => is_workspace_dir(&home.join(inst).join(ws)),
        _ => false,
    }
}

fn read_trimmed(p: &Path) -> Option<String> {
    let s = std::fs::read_to_string(p).ok()?;
    let s = s.trim_end_matches(['\n', '\r']).to_string();
    (!s.is_empty()).then_some(s)
}

/// The `.workspace` text of a namespace directory, as written (trailing newline dropped).
pub fn project_path(namespace_dir: &Path) -> Option<String> {
    read_trimmed(&namespace_dir.join(".workspace"))
}

/// The workspace id a workspace directory records.
pub fn workspace_id(workspace_dir: &Path) -> Option<String> {
    read_trimmed(&workspace_dir.join(".nanobot/workspace-id")).map(|s| s.trim().to_string())
}

/// The files that tell a store at `rel` (relative to HOME) which session
/// namespace and project it belongs to: the `.workspace` and
/// `.nanobot/workspace-id` of every directory between its instance and the
/// store, and the `.workspace` of each namespace such an id names. More
/// than any extractor reads, never less: the incremental cache keys on them
/// (`store::Reads::Also`).
pub fn governing_files(rel: &str, home: &Path) -> Vec<String> {
    let parts: Vec<&str> = rel.split('/').collect();
    let mut out = Vec::new();
    for k in 2..parts.len() {
        let dir = parts[..k].join("/");
        if let Some(id) = workspace_id(&home.join(&dir)) {
            out.push(format!("{}/sessions/{id}/.workspace", parts[0]));
        }
        out.push(format!("{dir}/.workspace"));
        out.push(format!("{dir}/.nanobot/workspace-id"));
    }
    out.sort();
    out.dedup();
    out
}

/// What a workspace of an instance tells a store inside it: its workspace-id
/// (the session namespace it binds to) and that namespace's `.workspace`
/// text (the project path).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WorkspaceIdentity {
    pub namespace: Option<String>,
    pub project_path: Option<String>,
}

/// The identity of the workspace `ws_rel` (relative to HOME) of instance
/// `instance`.
pub fn identity(home: &Path, instance: &str, ws_rel: &str) -> WorkspaceIdentity {
    let namespace = workspace_id(&home.join(ws_rel));
    let project_path = namespace
        .as_ref()
        .and_then(|id| project_path(&home.join(instance).join("sessions").join(id)));
    WorkspaceIdentity {
        namespace,
        project_path,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A namespace file is governed by its namespace's `.workspace`; a file
    /// in a workspace by the workspace's id file and the `.workspace` of the
    /// namespace it names.
    #[test]
    fn governing_files_follow_the_workspace_id_to_its_namespace() -> std::io::Result<()> {
        let home = tempfile::tempdir()?;
        let ws = home.path().join(".nanobot/work/.nanobot");
        std::fs::create_dir_all(&ws)?;
        std::fs::write(ws.join("workspace-id"), "ab12\n")?;
        assert_eq!(
            governing_files(".nanobot/sessions/ab12/x.jsonl", home.path()),
            [
                ".nanobot/sessions/.nanobot/workspace-id",
                ".nanobot/sessions/.workspace",
                ".nanobot/sessions/ab12/.nanobot/workspace-id",
                ".nanobot/sessions/ab12/.workspace",
            ]
        );
        assert_eq!(
            governing_files(".nanobot/work/memory/history.jsonl", home.path()),
            [
                ".nanobot/sessions/ab12/.workspace",
                ".nanobot/work/.nanobot/workspace-id",
                ".nanobot/work/.workspace",
                ".nanobot/work/memory/.nanobot/workspace-id",
                ".nanobot/work/memory/.workspace",
            ]
        );
        assert_eq!(
            governing_files(".nanobot/config.json", home.path()),
            Vec::<String>::new()
        );
        Ok(())
    }
}
