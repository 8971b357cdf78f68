package mcp

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"reasonix/core/atomicfile"
	"reasonix/core/config"
)

// Where a server was declared. User-level servers are trusted by
// installation; project-level ones need a launch grant.
const (
	// SourceUser is the user config or a --config file.
	SourceUser = "user"
	// SourceProject is the project's reasonix.toml.
	SourceProject = "project"
	// SourceMCPJSON is the project's .mcp.json.
	SourceMCPJSON = ".mcp.json"
)

// MCPJSONFile is the name of the project file in Claude Code's mcpServers
// format.
const MCPJSONFile = ".mcp.json"

// GrantsFile is the name of the launch-grant file in the Reasonix home.
const GrantsFile = "mcp-grants.json"

// Declared is one server as the configuration declares it, before ${VAR}
// expansion, with where it came from.
type Declared struct {
	// Config is the server as written; expand it only after the trust
	// check.
	Config ServerConfig
	// Source is SourceUser, SourceProject or SourceMCPJSON.
	Source string
	// File is the file that declared the server.
	File string
	// Disabled servers are listed but never started.
	Disabled bool
}

// Project reports whether the server came from the project, and so needs
// a launch grant before anything is started or contacted.
func (d Declared) Project() bool { return d.Source != SourceUser }

// Declarations lists the servers cfg declares in [[plugins]] and those of
// projectDir's .mcp.json (empty projectDir skips it), sorted by name. On a
// name clash the [[plugins]] entry wins. An entry is project-declared when
// the project reasonix.toml set it: entries merge by name as a whole, so
// the layer that wrote the name wrote everything the server launches.
//
// While the workspace is untrusted (cfg.ProjectTrusted false) the project
// declares nothing: its [[plugins]] entries are left out (Load already
// drops them) and .mcp.json is not read at all, so a stranger's file can
// neither start a server nor fail the run. Servers of the user config and
// of a --config file, even one naming the project's reasonix.toml, stay.
func Declarations(cfg *config.Config, projectDir string) ([]Declared, error) {
	var out []Declared
	seen := map[string]bool{}
	for _, p := range cfg.Plugins {
		sc, err := FromPlugin(p)
		if err != nil {
			return nil, fmt.Errorf("[[plugins]]: %w", err)
		}
		d := Declared{Config: sc, Source: SourceUser, Disabled: p.Disabled}
		d.File = cfg.Sources[config.EntryKey("plugins", p.Name)+".name"]
		if cfg.ProjectFile != "" && d.File == cfg.ProjectFile {
			if !cfg.ProjectTrusted {
				continue
			}
			d.Source = SourceProject
			d.Config.Project = true
		}
		seen[p.Name] = true
		out = append(out, d)
	}
	if projectDir != "" && cfg.ProjectTrusted {
		path := filepath.Join(projectDir, MCPJSONFile)
		servers, err := LoadMCPJSON(path)
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			return nil, err
		default:
			for _, sc := range servers {
				if seen[sc.Name] {
					continue
				}
				sc.Project = true
				out = append(out, Declared{Config: sc, Source: SourceMCPJSON, File: path})
			}
		}
	}
	slices.SortFunc(out, func(a, b Declared) int { return strings.Compare(a.Config.Name, b.Config.Name) })
	return out, nil
}

// Trust is the outcome of a grant check.
type Trust string

// The outcomes of Grants.Check.
const (
	// Granted: the server's identity was approved for this workspace.
	Granted Trust = "granted"
	// NotGranted: the server was never approved for this workspace.
	NotGranted Trust = "not_granted"
	// IdentityChanged: a grant exists, for a different identity.
	IdentityChanged Trust = "identity_changed"
)

// Grants are the launch grants of project-declared servers: for a
// workspace and a server name, the Identity the user approved. They live
// in one JSON file in the Reasonix home.
type Grants struct {
	path string
	doc  grantDoc
}

type grantDoc struct {
	Version    int                              `json:"version"`
	Workspaces map[string]map[string]grantEntry `json:"workspaces"`
}

type grantEntry struct {
	Identity string    `json:"identity"`
	Granted  time.Time `json:"granted"`
}

// GrantsPath is the grant file of the Reasonix home.
func GrantsPath(home string) string { return filepath.Join(home, GrantsFile) }

// LoadGrants reads the grant file at path; a missing file holds no
// grants.
func LoadGrants(path string) (*Grants, error) {
	g := &Grants{path: path}
	if err := g.load(); err != nil {
		return nil, err
	}
	return g, nil
}

func (g *Grants) load() error {
	g.doc = grantDoc{Version: 1, Workspaces: map[string]map[string]grantEntry{}}
	data, err := os.ReadFile(g.path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read mcp grants: %w", err)
	}
	if err := json.Unmarshal(data, &g.doc); err != nil {
		return fmt.Errorf("read mcp grants %s: %w", g.path, err)
	}
	if g.doc.Workspaces == nil {
		g.doc.Workspaces = map[string]map[string]grantEntry{}
	}
	return nil
}

// workspaceKey normalises a workspace directory so that spellings of one
// directory share their grants.
func workspaceKey(dir string) string {
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	return filepath.Clean(dir)
}

// Check tells whether the server named server, with the given identity,
// may be started in workspace.
func (g *Grants) Check(workspace, server, identity string) Trust {
	e, ok := g.doc.Workspaces[workspaceKey(workspace)][server]
	switch {
	case !ok:
		return NotGranted
	case e.Identity != identity:
		return IdentityChanged
	}
	return Granted
}

// Grant records that server, with identity, may be started in workspace,
// and saves the file at once. The file is read again first, so a grant
// another process recorded meanwhile is kept, and replaced atomically, so
// a reader never sees half of it.
func (g *Grants) Grant(workspace, server, identity string, now time.Time) error {
	if err := g.load(); err != nil {
		return err
	}
	ws := workspaceKey(workspace)
	if g.doc.Workspaces[ws] == nil {
		g.doc.Workspaces[ws] = map[string]grantEntry{}
	}
	g.doc.Workspaces[ws][server] = grantEntry{Identity: identity, Granted: now.UTC()}
	g.doc.Version = 1
	if err := atomicfile.WriteJSON(g.path, g.doc, 0o600); err != nil {
		return fmt.Errorf("save mcp grants: %w", err)
	}
	return nil
}

// UntrustedReason explains, for status lines and notices, why a
// project-declared server was not started.
func UntrustedReason(t Trust, server string) string {
	switch t {
	case IdentityChanged:
		return "untrusted: identity changed since it was approved; rerun with --trust-project-mcp"
	case NotGranted:
		return fmt.Sprintf("untrusted: declared by the project and not approved; rerun with --trust-project-mcp or run `reasonix mcp trust %s`", server)
	}
	return ""
}
