package assemble

import (
	"bufio"
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The layers of the module, lowest first. A package may import module
// packages of a lower layer only, except inside core and inside cmd, whose
// packages are peers. The order is docs/ARCHITECTURE.md's: cmd → tui →
// assemble → actors → actors/* → scheduler → core.
var layers = []struct {
	rank     int
	prefixes []string
}{
	{0, []string{"core/"}},
	{1, []string{"scheduler"}},
	{2, []string{"actors/event", "actors/kernel", "actors/workerpb"}},
	{3, []string{"actors/remote", "actors/fleet/fleetmsg", "actors/fleet/isolate"}},
	{4, []string{"actors/agent/team", "actors/fleet/resume"}},
	{5, []string{"actors/agent"}},
	{6, []string{"actors/fleet/link"}},
	{7, []string{"actors/mcpconn", "actors/fleet", "actors/goalctl"}},
	{8, []string{"actors/worker"}},
	{9, []string{"actors"}},
	{10, []string{"assemble"}},
	{11, []string{"tui/panel"}},
	{12, []string{"tui", "cmd/reasonix/internal/serve"}},
	{13, []string{"cmd/"}},
}

// peers are the layers whose packages may import each other.
var peers = map[int]bool{0: true, 13: true}

// frontends observe sessions: of actors they may import the facade and
// the event contract only, never the runtime's sub-packages.
var frontends = []string{"tui", "tui/panel", "cmd/reasonix/internal/serve"}

// rank is the layer of a package path relative to the module, -1 when it
// is outside every layer (test-only tooling such as third_party/patchcheck).
func rank(rel string) int {
	best, bestLen := -1, -1
	for _, l := range layers {
		for _, p := range l.prefixes {
			match := rel == p || strings.HasSuffix(p, "/") && strings.HasPrefix(rel, p) || strings.HasPrefix(rel, p+"/")
			if match && len(p) > bestLen {
				best, bestLen = l.rank, len(p)
			}
		}
	}
	return best
}

type listed struct {
	path    string
	dir     string
	files   []string
	imports []string
}

// goList lists the module's packages with their imports and product files.
func goList(t *testing.T) []listed {
	t.Helper()
	cmd := exec.Command("go", "list", "-e", "-f", "{{.ImportPath}}|{{.Dir}}|{{join .GoFiles \",\"}}|{{join .Imports \",\"}}", "./...")
	cmd.Dir = ".."
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.Bytes())
	}
	var pkgs []listed
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Split(sc.Text(), "|")
		if len(f) != 4 {
			t.Fatalf("go list line %q", sc.Text())
		}
		pkgs = append(pkgs, listed{path: f[0], dir: f[1], files: split(f[2]), imports: split(f[3])})
	}
	if len(pkgs) < 20 {
		t.Fatalf("go list found only %d packages", len(pkgs))
	}
	return pkgs
}

func split(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

const module = "reasonix/"

// TestImportsRunOneWay checks the layering with what go list reports, so a
// new import against the direction fails here and not in review.
func TestImportsRunOneWay(t *testing.T) {
	t.Parallel()
	for _, p := range goList(t) {
		rel := strings.TrimPrefix(p.path, module)
		from := rank(rel)
		for _, imp := range p.imports {
			if strings.HasPrefix(imp, "github.com/asynkron/protoactor-go") && rel != "actors" && !strings.HasPrefix(rel, "actors/") {
				t.Errorf("%s imports %s: only actors/... may import protoactor", rel, imp)
			}
			if strings.HasPrefix(imp, "github.com/asynkron/protoactor-go") && rel == "actors/event" {
				t.Errorf("actors/event imports %s: the frontend contract has no runtime", imp)
			}
			if !strings.HasPrefix(imp, module) {
				continue
			}
			irel := strings.TrimPrefix(imp, module)
			to := rank(irel)
			if from < 0 || to < 0 {
				t.Errorf("%s imports %s: a package outside the layers (add it to layers in %s)", rel, irel, "assemble/layers_test.go")
				continue
			}
			if to > from || to == from && !peers[from] {
				t.Errorf("%s (layer %d) imports %s (layer %d): imports run cmd → tui → assemble → actors → actors/* → scheduler → core", rel, from, irel, to)
			}
			for _, fe := range frontends {
				if rel == fe && strings.HasPrefix(irel, "actors/") && irel != "actors/event" {
					t.Errorf("frontend %s imports %s: frontends read actors/event and hold an actors.Live, nothing of the runtime", rel, irel)
				}
			}
		}
	}
}

// Rooms are limited: no package over maxPackageLines product lines
// (generated code aside) and no function over maxFuncLines. One that grows
// past that has found a seam.
const (
	maxPackageLines = 3000
	maxFuncLines    = 100
)

// TestRoomsStaySmall measures each package's product files, and checks
// that only kernel makes actor props.
func TestRoomsStaySmall(t *testing.T) {
	t.Parallel()
	for _, p := range goList(t) {
		rel := strings.TrimPrefix(p.path, module)
		total := 0
		for _, name := range p.files {
			path := filepath.Join(p.dir, name)
			src, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			fs := token.NewFileSet()
			f, err := parser.ParseFile(fs, path, src, parser.ParseComments)
			if err != nil {
				t.Fatal(err)
			}
			if ast.IsGenerated(f) {
				continue
			}
			if rel != "actors/kernel" {
				checkSpawnsThroughKernel(t, fs, f)
			}
			total += bytes.Count(src, []byte("\n"))
			for _, d := range f.Decls {
				fd, ok := d.(*ast.FuncDecl)
				if !ok || fd.Body == nil {
					continue
				}
				if n := fs.Position(fd.End()).Line - fs.Position(fd.Pos()).Line + 1; n > maxFuncLines {
					t.Errorf("%s: %s is %d lines, over %d", filepath.Join(rel, name), funcName(fd), n, maxFuncLines)
				}
			}
		}
		if total > maxPackageLines {
			t.Errorf("%s has %d product lines, over %d", rel, total, maxPackageLines)
		}
	}
}

func funcName(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return fd.Name.Name
	}
	return fmt.Sprintf("%s.%s", typeName(fd.Recv.List[0].Type), fd.Name.Name)
}

func typeName(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.StarExpr:
		return typeName(e.X)
	case *ast.IndexExpr:
		return typeName(e.X)
	case *ast.Ident:
		return e.Name
	}
	return "?"
}

// TestRankOfPaths pins the prefix rules rank relies on.
func TestRankOfPaths(t *testing.T) {
	t.Parallel()
	for path, want := range map[string]int{
		"core/config": 0, "scheduler": 1, "actors/event": 2, "actors/fleet/fleetmsg": 3, "actors/agent/team": 4, "actors/agent": 5,
		"actors/fleet/link": 6, "actors/fleet": 7, "actors": 9, "assemble": 10, "tui": 12, "tui/panel": 11, "cmd/reasonix": 13,
		"cmd/reasonix/internal/serve": 12, "cmd/reasonix/internal/doctor": 13, "third_party/patchcheck": -1, "actorsx": -1,
	} {
		if got := rank(path); got != want {
			t.Errorf("rank(%q) = %d, want %d", path, got, want)
		}
	}
}

// checkSpawnsThroughKernel fails for props made outside kernel.Props: an
// actor spawned from them would run without the repair middleware.
func checkSpawnsThroughKernel(t *testing.T, fs *token.FileSet, f *ast.File) {
	t.Helper()
	ast.Inspect(f, func(n ast.Node) bool {
		sel, ok := n.(*ast.SelectorExpr)
		if !ok || !strings.HasPrefix(sel.Sel.Name, "PropsFrom") {
			return true
		}
		if id, ok := sel.X.(*ast.Ident); ok && id.Name == "actor" {
			t.Errorf("%s: actor.%s: make actors' props with kernel.Props, which adds the repair middleware", fs.Position(sel.Pos()), sel.Sel.Name)
		}
		return true
	})
}
