package styles

import (
	"embed"
	"io/fs"
	"sort"
	"sync" // reasonix: for load

	"github.com/alecthomas/chroma/v2"
)

//go:embed *.xml
var embedded embed.FS

// Registry of Styles.
//
// reasonix: it starts empty; the embedded styles are read on first use
// (load, from Register, Names and Get), not at init, which parsed 66 files
// in every program linking the package. A name already in the map when
// they are read is kept.
var Registry = map[string]*chroma.Style{}

var loadOnce sync.Once // reasonix: guards load

// load adds the embedded styles to Registry, once. reasonix: was
// Registry's initialiser.
func load() {
	loadOnce.Do(func() {
		files, err := fs.ReadDir(embedded, ".")
		if err != nil {
			panic(err)
		}
		for _, file := range files {
			if file.IsDir() {
				continue
			}
			r, err := embedded.Open(file.Name())
			if err != nil {
				panic(err)
			}
			style, err := chroma.NewXMLStyle(r)
			if err != nil {
				panic(err)
			}
			if _, ok := Registry[style.Name]; !ok { // reasonix: keep earlier entries
				Registry[style.Name] = style
			}
			_ = r.Close()
		}
		if Fallback == nil { // reasonix: unless reassigned before
			Fallback = Registry["swapoff"]
		}
	})
}

// Fallback style. Reassign to change the default fallback style.
//
// reasonix: nil until the first Register, Names or Get.
var Fallback *chroma.Style

// Register a chroma.Style.
func Register(style *chroma.Style) *chroma.Style {
	load() // reasonix: embedded styles first
	Registry[style.Name] = style
	return style
}

// Names of all available styles.
func Names() []string {
	load() // reasonix: embedded styles first
	out := []string{}
	for name := range Registry {
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}

// Get named style, or Fallback.
func Get(name string) *chroma.Style {
	load() // reasonix: embedded styles first
	if style, ok := Registry[name]; ok {
		return style
	}
	return Fallback
}
