package dubsimtest_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"go/importer"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const (
	modulePath = "github.com/dubsim/dubsim"
	pkgPath    = modulePath + "/dubsimtest"
)

// TestExportedAPI checks that the exported API of dubsimtest (what go doc
// shows: functions, types, their exported fields and methods, variables,
// constants) names no other package of the module: a test that imports
// dubsimtest depends on its own types only, which follow the control API's
// wire format, not on the simulator's packages. It reads the compiler's
// export data of the package (go list -export).
func TestExportedAPI(t *testing.T) {
	t.Parallel()
	pkg := loadExported(t, pkgPath)
	leaks := apiLeaks(pkg)
	assert.Empty(t, leaks, "exported API of %s naming another package of the module", pkgPath)
	assert.Greater(t, len(pkg.Scope().Names()), 20, "the package was read")
}

// TestExportedAPIFindsLeaks shows that apiLeaks finds a leak where there
// is one: the fields of the package server's exported *server.Server and
// server.Parts name sim/engine and sim/control types.
func TestExportedAPIFindsLeaks(t *testing.T) {
	t.Parallel()
	leaks := apiLeaks(loadExported(t, modulePath+"/sim/server"))
	assert.NotEmpty(t, leaks)
	assert.True(t, strings.Contains(strings.Join(leaks, "\n"), modulePath+"/sim"), "%v", leaks)
}

// exportFiles are the compiler's export data files of the packages the
// tests read and of their dependencies, by import path: one go list for
// both tests.
var exportFiles = sync.OnceValues(func() (map[string]string, error) {
	cmd := exec.Command("go", "list", "-export", "-deps", "-json", pkgPath, modulePath+"/sim/server")
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list -export: %w", err)
	}
	exports := map[string]string{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p struct{ ImportPath, Export string }
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			return exports, nil
		} else if err != nil {
			return nil, fmt.Errorf("go list -export: %w", err)
		}
		exports[p.ImportPath] = p.Export
	}
})

// loadExported reads the type information of path from the compiler's
// export data, that of its dependencies too.
func loadExported(t *testing.T, path string) *types.Package {
	t.Helper()
	exports, err := exportFiles()
	require.NoError(t, err)
	imp := importer.ForCompiler(token.NewFileSet(), "gc", func(p string) (io.ReadCloser, error) {
		f, ok := exports[p]
		if !ok || f == "" {
			return nil, errors.New("no export data for " + p)
		}
		return os.Open(f)
	})
	pkg, err := imp.Import(path)
	require.NoError(t, err)
	return pkg
}

// apiLeaks lists "Name: other/package.Type" for every exported object of
// pkg whose type, exported fields, exported methods or type parameters
// reach a named type of another package of the module.
func apiLeaks(pkg *types.Package) []string {
	var leaks []string
	for _, name := range pkg.Scope().Names() {
		obj := pkg.Scope().Lookup(name)
		if !obj.Exported() {
			continue
		}
		w := walker{home: pkg, seen: map[types.Type]bool{}}
		w.walk(obj.Type())
		if tn, ok := obj.(*types.TypeName); ok {
			// Methods of the type and of its pointer: go doc shows both.
			ms := types.NewMethodSet(types.NewPointer(tn.Type()))
			for i := range ms.Len() {
				if m := ms.At(i).Obj(); m.Exported() {
					w.walk(m.Type())
				}
			}
		}
		for _, l := range w.leaks {
			leaks = append(leaks, name+": "+l)
		}
	}
	sort.Strings(leaks)
	return leaks
}

type walker struct {
	home  *types.Package
	seen  map[types.Type]bool
	leaks []string
}

func (w *walker) walk(t types.Type) {
	if t == nil || w.seen[t] {
		return
	}
	w.seen[t] = true
	switch t := t.(type) {
	case *types.Named:
		obj := t.Obj()
		if obj.Pkg() != nil && obj.Pkg() != w.home {
			if p := obj.Pkg().Path(); p == modulePath || strings.HasPrefix(p, modulePath+"/") {
				w.leaks = append(w.leaks, p+"."+obj.Name())
			}
			return // another package's type: its inside is not this API
		}
		if ta := t.TypeArgs(); ta != nil {
			for i := range ta.Len() {
				w.walk(ta.At(i))
			}
		}
		w.walk(t.Underlying())
		for i := range t.NumMethods() {
			if m := t.Method(i); m.Exported() {
				w.walk(m.Type())
			}
		}
	case *types.Alias:
		w.walk(types.Unalias(t))
	case *types.Pointer:
		w.walk(t.Elem())
	case *types.Slice:
		w.walk(t.Elem())
	case *types.Array:
		w.walk(t.Elem())
	case *types.Map:
		w.walk(t.Key())
		w.walk(t.Elem())
	case *types.Chan:
		w.walk(t.Elem())
	case *types.Signature:
		if tp := t.TypeParams(); tp != nil {
			for i := range tp.Len() {
				w.walk(tp.At(i).Constraint())
			}
		}
		w.walk(t.Params())
		w.walk(t.Results())
	case *types.Tuple:
		for i := range t.Len() {
			w.walk(t.At(i).Type())
		}
	case *types.Struct:
		for i := range t.NumFields() {
			if f := t.Field(i); f.Exported() {
				w.walk(f.Type())
			}
		}
	case *types.Interface:
		for i := range t.NumMethods() {
			if m := t.Method(i); m.Exported() {
				w.walk(m.Type())
			}
		}
		for i := range t.NumEmbeddeds() {
			w.walk(t.EmbeddedType(i))
		}
	case *types.TypeParam:
		w.walk(t.Constraint())
	}
}
