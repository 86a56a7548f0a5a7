package study

import (
	"errors"
	"fmt"
	"go/ast"
	goparser "go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/engine/ceph/rbdtier"
	"github.com/tierbench/tierbench/tier"
)

// TestNothingAsksWhichKind fails when a non-test file of the module,
// other than a kind's own (the file that declares its Key method),
// compares a tier kind's name (x == "loop", case "rbd":) or asks for a
// kind's type (k.(tier.LoopSpec), a type switch on one): what a kind can
// do is its Abilities, read as data, so adding a kind touches its own
// file and the tables that list kinds, not every place that decides.
func TestNothingAsksWhichKind(t *testing.T) {
	keys, types := map[string]bool{}, map[string]bool{}
	for _, row := range tierKinds {
		keys[row.kind.Key()] = true
		name := fmt.Sprintf("%T", row.kind)
		types[name[strings.LastIndex(name, ".")+1:]] = true
	}
	fset := token.NewFileSet()
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || d.Name() == "java" || strings.HasPrefix(d.Name(), ".")) && path != ".." {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := goparser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		if declaresKey(f) {
			return nil // a kind's own file
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.BinaryExpr:
				if n.Op == token.EQL || n.Op == token.NEQ {
					for i, side := range []ast.Expr{n.X, n.Y} {
						other := []ast.Expr{n.Y, n.X}[i]
						if strings.Contains(strings.ToLower(typeName(other)), "fstype") {
							continue // a filesystem's type: tmpfs is one too
						}
						if k := literal(side); keys[k] {
							t.Errorf("%s: compares a tier kind's name (%q); read the kind's Abilities instead", fset.Position(n.Pos()), k)
						}
					}
				}
			case *ast.CaseClause:
				for _, e := range n.List {
					if k := literal(e); keys[k] {
						t.Errorf("%s: switches on a tier kind's name (%q); read the kind's Abilities instead", fset.Position(n.Pos()), k)
					}
					if name := typeName(e); types[name] {
						t.Errorf("%s: switches on a tier kind's type (%s); read the kind's Abilities instead", fset.Position(n.Pos()), name)
					}
				}
			case *ast.SelectorExpr:
				// The flags that stood for kinds and layering before
				// both were decided once (Abilities, Layering).
				if gone[n.Sel.Name] && !strings.HasPrefix(path, "../tier/") {
					t.Errorf("%s: reads %s, a tier's layering outside tier/; read the tier's Stack", fset.Position(n.Pos()), n.Sel.Name)
				}
			case *ast.TypeAssertExpr:
				if name := typeName(n.Type); types[name] {
					t.Errorf("%s: asks for a tier kind's type (%s); read the kind's Abilities, or ask the kind's own file (tier.ClassOf, rbdtier.Of)", fset.Position(n.Pos()), name)
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// gone are fields no code outside tier/ may read: a tier's layering is
// its Stack. (engine.Spec.Crashable is an engine's ability, not a
// tier's.)
var gone = map[string]bool{"PmemEmulated": true, "EmulateGiven": true}

// declaresKey reports whether f declares a method Key() string: a kind's
// own file.
func declaresKey(f *ast.File) bool {
	for _, d := range f.Decls {
		if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv != nil && fn.Name.Name == "Key" && fn.Type.Params.NumFields() == 0 {
			return true
		}
	}
	return false
}

// literal is e's value if e is a string literal, else "".
func literal(e ast.Expr) string {
	if b, ok := e.(*ast.BasicLit); ok && b.Kind == token.STRING {
		v, _ := strconv.Unquote(b.Value)
		return v
	}
	return ""
}

// typeName is the name of the type e names (LoopSpec, Tier), else "".
func typeName(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.Ident:
		return e.Name
	case *ast.SelectorExpr:
		return e.Sel.Name
	}
	return ""
}

// TestRbdLayering: an rbd tier, whose kind lives beside Ceph, is refused
// a power cut (its cluster makes it durable), and otherwise stands bare.
func TestRbdLayering(t *testing.T) {
	s := tier.Spec{Name: "img", Kind: rbdtier.Tier{}}
	if _, err := tier.Layering(s, tier.Crashes{PowerCut: true}, tier.Host{}); !errors.Is(err, tier.ErrCrash) {
		t.Errorf("power cut on rbd: %v, want refused", err)
	}
	st, err := tier.Layering(s, tier.Crashes{}, tier.Host{})
	if err != nil || st.CrashLayer || st.Latency != nil || st.AtomicWrite != tier.SectorAtomic {
		t.Errorf("rbd without a cut: %+v, %v; want a bare image of 512B atomic writes", st, err)
	}
}
