package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"

	"github.com/BurntSushi/toml"
)

// Options selects the files Load reads.
type Options struct {
	// Home is the Reasonix home holding config.toml and .env; empty means
	// the result of Home().
	Home string
	// ProjectDir is the directory whose reasonix.toml forms the project
	// layer; empty skips that layer.
	ProjectDir string
	// File is an explicit config file (--config). It must exist, has the
	// highest precedence and is trusted like the user config.
	File string
	// KnownKinds lists the provider kinds a provider may use. Empty means
	// provider.Kinds(), or just "openai" when no kind is registered.
	KnownKinds []string
	// TrustProject honours the project layer in full, as the user decided
	// for this workspace (see package trust). When false the project may
	// only tighten: the keys it could loosen with are left out and listed
	// in Config.Untrusted.
	TrustProject bool
	// Getenv reads the environment for the home and the API keys; nil
	// means os.Getenv.
	Getenv func(string) string
}

// SourceDefault is the Sources value of a built-in setting.
const SourceDefault = "default"

// Load reads and merges the configuration layers described by opts (see the
// package doc), validates the result and returns it. Missing user and
// project files are skipped; a missing explicit file is an error.
func Load(opts Options) (*Config, error) {
	getenv := opts.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	home := opts.Home
	if home == "" {
		h, err := HomeFrom(getenv)
		if err != nil {
			return nil, err
		}
		home = h
	}

	var files []fileLayer
	files = append(files, fileLayer{kind: layerUser, path: UserConfigPath(home)})
	if opts.ProjectDir != "" {
		p := ProjectConfigPath(opts.ProjectDir)
		if opts.File == "" || !samePath(p, opts.File) {
			files = append(files, fileLayer{kind: layerProject, path: p})
		}
	}
	if opts.File != "" {
		files = append(files, fileLayer{kind: layerExplicit, path: opts.File, required: true})
	}

	m := newMerger(home)
	m.trustProject = opts.TrustProject
	m.cfg.ProjectTrusted = opts.TrustProject
	m.cfg.getenv = getenv
	if err := m.applyText(layerDefault, SourceDefault, builtinTOML); err != nil {
		return nil, fmt.Errorf("built-in defaults: %w", err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f.path)
		if err != nil {
			if !f.required && errors.Is(err, fs.ErrNotExist) {
				continue
			}
			return nil, fmt.Errorf("read config: %w", err)
		}
		if err := m.applyText(f.kind, f.path, string(data)); err != nil {
			return nil, err
		}
		m.cfg.Files = append(m.cfg.Files, f.path)
		if f.kind == layerProject {
			m.cfg.ProjectFile = f.path
		}
	}
	if len(m.cfg.Providers) == 0 {
		if err := m.applyText(layerDefault, SourceDefault, builtinProviderTOML); err != nil {
			return nil, fmt.Errorf("built-in provider: %w", err)
		}
	}
	m.finish()
	m.cfg.Untrusted = sortedSet(m.untrusted)

	kinds := opts.KnownKinds
	if len(kinds) == 0 {
		kinds = registeredKinds()
	}
	m.problems = append(m.problems, validate(m.cfg, kinds)...)
	if len(m.problems) > 0 {
		return nil, &ValidationError{Problems: m.problems}
	}
	return m.cfg, nil
}

// ValidationError lists every invalid value found in the merged
// configuration, each as "file: key: problem".
type ValidationError struct {
	Problems []string
}

// Error lists the problems, one per line when there are several.
func (e *ValidationError) Error() string {
	if len(e.Problems) == 1 {
		return "invalid config: " + e.Problems[0]
	}
	return "invalid config:\n  " + strings.Join(e.Problems, "\n  ")
}

type layerKind int

const (
	layerDefault layerKind = iota
	layerUser
	layerProject
	layerExplicit
)

type fileLayer struct {
	kind     layerKind
	path     string
	required bool
}

// samePath reports whether a and b name the same file, so that passing the
// project file as --config does not read it twice.
func samePath(a, b string) bool {
	if ia, err := os.Stat(a); err == nil {
		if ib, err := os.Stat(b); err == nil {
			return os.SameFile(ia, ib)
		}
	}
	aa, errA := filepath.Abs(a)
	bb, errB := filepath.Abs(b)
	return errA == nil && errB == nil && aa == bb
}

// retiredKeys are still accepted for upgrade compatibility but do nothing.
var retiredKeys = map[string]bool{
	"agent.planner_max_steps": true,
}

// merger folds layers into one Config. Problems found while merging (bad
// case, duplicate or missing names) join the validation problems.
type merger struct {
	cfg      *Config
	rank     map[string]layerKind
	problems []string
	// userProviders holds the providers declared before the project layer,
	// whose endpoint and key the project may not change; trustedProviders
	// is the same list in order, and baseProvider the one the trusted
	// layers' default model uses.
	userProviders    map[string]ProviderConfig
	trustedProviders []ProviderConfig
	baseProvider     string
	// trustProject is Options.TrustProject; untrusted collects the keys an
	// untrusted project layer was not allowed to set.
	trustProject bool
	untrusted    map[string]bool
}

func newMerger(home string) *merger {
	return &merger{
		cfg:       &Config{Home: home, Sources: map[string]string{}},
		rank:      map[string]layerKind{SourceDefault: layerDefault},
		untrusted: map[string]bool{},
	}
}

// applyText decodes one layer and merges it over the current state.
func (m *merger) applyText(kind layerKind, name, text string) error {
	var raw map[string]any
	if _, err := toml.Decode(text, &raw); err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			return fmt.Errorf("parse %s:%d:%d: %w", name, pe.Position.Line, pe.Position.Col, err)
		}
		return fmt.Errorf("parse %s: %w", name, err)
	}
	var layer Config
	md, err := toml.Decode(text, &layer)
	if err != nil {
		return fmt.Errorf("load %s: %w", name, err)
	}
	if _, ok := m.rank[name]; !ok || kind > m.rank[name] {
		m.rank[name] = kind
	}
	m.checkCase(name, raw, reflect.TypeOf(Config{}), nil)
	m.checkNames(name, raw)
	m.warnUndecoded(name, md)

	if kind == layerProject {
		// With no user providers the built-in one is what the user relies
		// on (a bare DEEPSEEK_API_KEY), so it is protected the same way.
		protected := m.cfg.Providers
		if len(protected) == 0 {
			protected = builtinProviders()
		}
		m.userProviders = map[string]ProviderConfig{}
		for _, p := range protected {
			m.userProviders[p.Name] = p
		}
		m.trustedProviders = protected
		m.baseProvider = m.resolveProvider("default_model", m.cfg.DefaultModel)
	}
	m.mergeStruct(reflect.ValueOf(m.cfg).Elem(), reflect.ValueOf(&layer).Elem(), raw, nil, kind, name)
	return nil
}

// checkCase reports keys that differ from a schema key only in case. The
// decoder would accept them silently and pick one at random when both
// spellings appear, so they are errors rather than unknown keys.
func (m *merger) checkCase(file string, raw any, t reflect.Type, path []string) {
	switch t.Kind() {
	case reflect.Struct:
		tbl, ok := raw.(map[string]any)
		if !ok {
			return
		}
		for _, k := range sortedKeys(tbl) {
			p := appendPath(path, k)
			f, exact := fieldByKey(t, k)
			if exact {
				m.checkCase(file, tbl[k], f.Type, p)
				continue
			}
			if f != nil {
				m.problems = append(m.problems, fmt.Sprintf("%s: %s: unknown key (keys are case-sensitive; did you mean %q?)",
					file, dotted(p), tomlName(*f)))
			}
		}
	case reflect.Map:
		if tbl, ok := raw.(map[string]any); ok {
			for _, k := range sortedKeys(tbl) {
				m.checkCase(file, tbl[k], t.Elem(), appendPath(path, k))
			}
		}
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Struct {
			for _, e := range rawEntries(raw) {
				m.checkCase(file, e, t.Elem(), path)
			}
		}
	}
}

// checkNames reports [[providers]], [[plugins]] and [[workers]] entries without a name
// and names repeated within one file.
func (m *merger) checkNames(file string, raw map[string]any) {
	for _, array := range []string{"providers", "plugins", "workers"} {
		seen := map[string]bool{}
		for i, e := range rawEntries(raw[array]) {
			name, _ := e["name"].(string)
			switch {
			case name == "":
				m.problems = append(m.problems, fmt.Sprintf("%s: %s: entry %d has no name", file, array, i+1))
			case seen[name]:
				m.problems = append(m.problems, fmt.Sprintf("%s: %s: name %q is declared twice", file, array, name))
			}
			seen[name] = true
		}
	}
}

// warnUndecoded turns keys the schema does not know into warnings, naming
// only the outermost unknown key of an unknown table.
func (m *merger) warnUndecoded(file string, md toml.MetaData) {
	undecoded := md.Undecoded()
	unknown := make(map[string]bool, len(undecoded))
	seen := map[string]bool{}
	for _, k := range undecoded {
		unknown[k.String()] = true
	}
outer:
	for _, k := range undecoded {
		for i := 1; i < len(k); i++ {
			if unknown[k[:i].String()] {
				continue outer
			}
		}
		s := dotted(k)
		if seen[s] {
			continue
		}
		seen[s] = true
		if retiredKeys[s] {
			m.warn("%s: %s is retired and ignored; remove it", file, s)
			continue
		}
		m.warn("%s: unknown key %s", file, s)
	}
}

func (m *merger) warn(format string, args ...any) {
	m.cfg.Warnings = append(m.cfg.Warnings, fmt.Sprintf(format, args...))
}

// projectDenied reports whether a project file may not set key: the keys
// that widen the sandbox, expose the browser frontend, choose which
// executable runs, or send tasks and the worker token to other hosts.
func projectDenied(key string) bool {
	switch key {
	case "sandbox.workspace_root", "sandbox.allow_write", "sandbox.bash", "sandbox.network",
		"serve", "tools.shell.path", "environment.tools", "remote", "workers":
		return true
	}
	return false
}

// protectedProviderKeys are the fields of a user-declared provider that a
// project file cannot change, so it cannot send the user's key elsewhere.
var protectedProviderKeys = []string{"base_url", "chat_url", "models_url", "api_key_env"}

func (m *merger) mergeStruct(dst, src reflect.Value, raw map[string]any, path []string, kind layerKind, file string) {
	t := dst.Type()
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name := tomlName(f)
		if name == "" {
			continue
		}
		rv, ok := raw[name]
		if !ok {
			continue
		}
		p := appendPath(path, name)
		key := dotted(p)
		if kind == layerProject && projectDenied(key) {
			m.refuse(file, p, rv)
			continue
		}
		// A project may make the writer fallback stricter, never turn
		// prompts off: a cloned repository must not approve its own edits.
		if kind == layerProject && key == "permissions.mode" && rv == "allow" {
			m.warn("%s: permissions.mode = \"allow\" is ignored: only the user config may turn approval prompts off", file)
			continue
		}
		held := kind == layerProject && !m.trustProject
		df, sf := dst.Field(i), src.Field(i)
		switch {
		case f.Type.Kind() == reflect.Struct:
			sub, _ := rv.(map[string]any)
			m.mergeStruct(df, sf, sub, p, kind, file)
		case held && f.Type.Kind() == reflect.Slice && f.Type.Elem().Kind() == reflect.Struct:
			// Untrusted, a project adds or changes no model endpoint
			// and no MCP server.
			for _, e := range rawEntries(rv) {
				if n, _ := e["name"].(string); n != "" {
					m.untrusted[EntryKey(name, n)] = true
				}
			}
		case held && m.holdBack(key, rv):
			m.untrusted[key] = true
		case f.Type.Kind() == reflect.Map:
			if sf.Len() == 0 {
				continue
			}
			if df.IsNil() {
				df.Set(reflect.MakeMapWithSize(f.Type, sf.Len()))
			}
			for _, k := range sortedMapKeys(sf) {
				kp := dotted(appendPath(p, k))
				if held && key == "agent.subagent_models" && !m.keepsProvider(key, sf.MapIndex(reflect.ValueOf(k)).String()) {
					m.untrusted[kp] = true
					continue
				}
				df.SetMapIndex(reflect.ValueOf(k), sf.MapIndex(reflect.ValueOf(k)))
				m.cfg.Sources[kp] = file
			}
		case f.Type.Kind() == reflect.Slice && f.Type.Elem().Kind() == reflect.Struct:
			m.mergeEntries(df, sf, rawEntries(rv), name, kind, file)
		case unionKeys[key]:
			m.union(key, df.Addr().Interface().(*[]string), sf.Interface().([]string), file)
		default:
			df.Set(sf)
			m.cfg.Sources[key] = file
		}
	}
}

// unionKeys are the lists every layer adds to and none can shorten: no
// layer, trusted or not, can make a path readable that another forbids, or
// lift a deny or ask rule another wrote, so `deny = []` removes nothing.
var unionKeys = map[string]bool{
	"sandbox.forbid_read": true,
	"permissions.deny":    true,
	"permissions.ask":     true,
}

// union adds the entries of add that list lacks, keeping their order.
// Sources names every file that contributed an entry, lowest first; a file
// that only repeated entries or wrote an empty list is named only when no
// file is yet.
func (m *merger) union(key string, list *[]string, add []string, file string) {
	have := map[string]bool{}
	for _, p := range *list {
		have[p] = true
	}
	added := false
	for _, p := range add {
		if !have[p] {
			have[p] = true
			*list = append(*list, p)
			added = true
		}
	}
	prev, ok := m.cfg.Sources[key]
	switch {
	case !ok:
		m.cfg.Sources[key] = file
	case added && !slices.Contains(strings.Split(prev, ", "), file):
		m.cfg.Sources[key] = prev + ", " + file
	}
}

// refuse warns once per leaf key of a value the project file may not set.
func (m *merger) refuse(file string, path []string, v any) {
	if tbl, ok := v.(map[string]any); ok && len(tbl) > 0 {
		for _, k := range sortedKeys(tbl) {
			m.refuse(file, appendPath(path, k), tbl[k])
		}
		return
	}
	m.warn("%s: %s is ignored: only the user config may set it", file, dotted(path))
}

// mergeEntries merges [[providers]] or [[plugins]] by name: an entry
// replaces the current entry of that name as a whole, a new name appends.
func (m *merger) mergeEntries(dst, src reflect.Value, raws []map[string]any, array string, kind layerKind, file string) {
	for i := 0; i < src.Len(); i++ {
		e := reflect.New(src.Type().Elem()).Elem()
		e.Set(src.Index(i))
		name := e.FieldByName("Name").String()
		if name == "" {
			continue // reported by checkNames
		}
		var raw map[string]any
		if i < len(raws) {
			raw = raws[i]
		}
		prefix := EntryKey(array, name)
		var kept map[string]string // sources of the protected keys, when protected
		if array == "providers" && kind == layerProject {
			if _, ok := m.userProviders[name]; !ok {
				if _, set := raw["api_key_env"]; set {
					// Otherwise a repository could name any key in the
					// user's environment and point it at its own URL.
					m.warn("%s: %s.api_key_env is ignored: a provider declared only by a project file cannot read an API key; declare it in the user config", file, prefix)
					pc := e.Interface().(ProviderConfig)
					pc.APIKeyEnv = ""
					e.Set(reflect.ValueOf(pc))
					delete(raw, "api_key_env")
				}
			}
			if user, ok := m.userProviders[name]; ok {
				e.Set(reflect.ValueOf(m.protectProvider(file, e.Interface().(ProviderConfig), user, raw)))
				kept = map[string]string{}
				for _, k := range protectedProviderKeys {
					if s, ok := m.cfg.Sources[prefix+"."+k]; ok {
						kept[k] = s
					}
				}
			}
		}

		idx := -1
		for j := 0; j < dst.Len(); j++ {
			if dst.Index(j).FieldByName("Name").String() == name {
				idx = j
				break
			}
		}
		if idx >= 0 {
			dst.Index(idx).Set(e)
			for k := range m.cfg.Sources {
				if strings.HasPrefix(k, prefix+".") {
					delete(m.cfg.Sources, k)
				}
			}
		} else {
			dst.Set(reflect.Append(dst, e))
		}

		t := e.Type()
		for j := 0; j < t.NumField(); j++ {
			k := tomlName(t.Field(j))
			if _, ok := raw[k]; ok && k != "" {
				m.cfg.Sources[prefix+"."+k] = file
			}
		}
		if kept != nil {
			for _, k := range protectedProviderKeys {
				if s, ok := kept[k]; ok {
					m.cfg.Sources[prefix+"."+k] = s
				} else {
					delete(m.cfg.Sources, prefix+"."+k)
				}
			}
		}
	}
}

// protectProvider returns the project's entry with the user's endpoint and
// key variable restored, warning about each value the project tried to
// change.
func (m *merger) protectProvider(file string, p, user ProviderConfig, raw map[string]any) ProviderConfig {
	fields := []struct {
		key       string
		got, want *string
	}{
		{"base_url", &p.BaseURL, &user.BaseURL},
		{"chat_url", &p.ChatURL, &user.ChatURL},
		{"models_url", &p.ModelsURL, &user.ModelsURL},
		{"api_key_env", &p.APIKeyEnv, &user.APIKeyEnv},
	}
	for _, f := range fields {
		if _, set := raw[f.key]; set && *f.got != *f.want {
			m.warn("%s: %s.%s is ignored: a project file cannot change the endpoint or key of a provider the user config declares or that is built in",
				file, EntryKey("providers", p.Name), f.key)
		}
		*f.got = *f.want
	}
	return p
}

// finish fills per-entry defaults and normalises values after all layers
// are merged.
func (m *merger) finish() {
	c := m.cfg
	if c.DefaultModel == "" && len(c.Providers) > 0 {
		c.DefaultModel = c.Providers[0].Name
		c.Sources["default_model"] = SourceDefault
	}
	for i := range c.Providers {
		p := &c.Providers[i]
		prefix := EntryKey("providers", p.Name)
		if _, set := c.Sources[prefix+".stall_timeout_seconds"]; !set {
			p.StallTimeoutSeconds = defaultStallTimeoutSeconds
			c.Sources[prefix+".stall_timeout_seconds"] = SourceDefault
		}
		if _, set := c.Sources[prefix+".max_retries"]; !set {
			p.MaxRetries = defaultMaxRetries
			c.Sources[prefix+".max_retries"] = SourceDefault
		}
		if _, set := c.Sources[prefix+".send_reasoning"]; !set {
			p.SendReasoning = true
			c.Sources[prefix+".send_reasoning"] = SourceDefault
		}
		if p.Default == "" && p.Model == "" && len(p.Models) > 0 {
			p.Default = p.Models[0]
			c.Sources[prefix+".default"] = SourceDefault
		}
	}
	for i := range c.Plugins {
		p := &c.Plugins[i]
		if p.Type == "" {
			p.Type = defaultPluginType
			c.Sources[EntryKey("plugins", p.Name)+".type"] = SourceDefault
		}
		p.OAuthPrivateKeyFile = resolvePath(p.OAuthPrivateKeyFile, c.Sources[EntryKey("plugins", p.Name)+".oauth_private_key_file"])
	}
	for i := range c.Workers {
		w := &c.Workers[i]
		if key := EntryKey("workers", w.Name) + ".capacity"; c.Sources[key] == "" {
			w.Capacity = defaultWorkerCapacity
			c.Sources[key] = SourceDefault
		}
	}
	for _, f := range []struct {
		key string
		p   *string
	}{
		{"remote.token_file", &c.Remote.TokenFile},
		{"remote.tls_cert", &c.Remote.TLSCert},
		{"remote.tls_key", &c.Remote.TLSKey},
		{"remote.tls_ca", &c.Remote.TLSCA},
	} {
		*f.p = resolvePath(*f.p, c.Sources[f.key])
	}
	c.UI.CursorShape = normalizeCursorShape(c.UI.CursorShape)

	// Both prompt keys may come from different layers; the higher layer
	// expresses the newer intent.
	a := &c.Agent
	if a.SystemPrompt != "" && a.SystemPromptFile != "" {
		sp, sf := c.Sources["agent.system_prompt"], c.Sources["agent.system_prompt_file"]
		switch {
		case m.rank[sp] > m.rank[sf]:
			a.SystemPromptFile = ""
			delete(c.Sources, "agent.system_prompt_file")
		case m.rank[sf] > m.rank[sp]:
			a.SystemPrompt = ""
			delete(c.Sources, "agent.system_prompt")
		default:
			m.problems = append(m.problems, fmt.Sprintf("%s: agent.system_prompt_file: set together with agent.system_prompt; keep one", sf))
		}
	}
	if a.SystemPromptFile != "" && !filepath.IsAbs(a.SystemPromptFile) {
		if src := c.Sources["agent.system_prompt_file"]; src != SourceDefault && src != "" {
			a.SystemPromptFile = filepath.Join(filepath.Dir(src), a.SystemPromptFile)
		}
	}
}

// resolvePath makes a path key usable from any working directory: "~/"
// names the user's home directory and a relative path is taken relative
// to the directory of the file that set it. An empty path stays empty.
func resolvePath(p, source string) string {
	switch {
	case strings.TrimSpace(p) == "":
		return p // validation reports a blank path
	case p == "~" || strings.HasPrefix(p, "~/") || strings.HasPrefix(p, `~\`):
		if h, err := os.UserHomeDir(); err == nil {
			return filepath.Join(h, p[1:])
		}
		return p
	case filepath.IsAbs(p) || source == "" || source == SourceDefault:
		return p
	}
	return filepath.Join(filepath.Dir(source), p)
}

// builtinProviders decodes the built-in provider entries.
func builtinProviders() []ProviderConfig {
	var c Config
	if _, err := toml.Decode(builtinProviderTOML, &c); err != nil {
		panic("config: built-in provider does not decode: " + err.Error())
	}
	return c.Providers
}

// normalizeCursorShape maps any value onto the three shapes the terminal
// frontend can draw, falling back to bar.
func normalizeCursorShape(s string) string {
	switch v := strings.ToLower(strings.TrimSpace(s)); v {
	case "underline", "block", "bar":
		return v
	}
	return "bar"
}

// tomlName returns the TOML key of a schema field, or "" for fields outside
// the file schema.
func tomlName(f reflect.StructField) string {
	if !f.IsExported() {
		return ""
	}
	name, _, _ := strings.Cut(f.Tag.Get("toml"), ",")
	if name == "-" {
		return ""
	}
	return name
}

// fieldByKey finds the schema field for key; exact is false when only a
// case-insensitive match exists.
func fieldByKey(t reflect.Type, key string) (f *reflect.StructField, exact bool) {
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		name := tomlName(sf)
		if name == "" {
			continue
		}
		if name == key {
			return &sf, true
		}
		if f == nil && strings.EqualFold(name, key) {
			f = &sf
		}
	}
	return f, false
}

// rawEntries returns the tables of an array of tables, whether it was
// written as [[x]] blocks or as an inline array.
func rawEntries(v any) []map[string]any {
	switch a := v.(type) {
	case []map[string]any:
		return a
	case []any:
		out := make([]map[string]any, 0, len(a))
		for _, e := range a {
			tbl, _ := e.(map[string]any)
			out = append(out, tbl)
		}
		return out
	}
	return nil
}

// sortedSet returns the members of set in order; nil when it is empty.
func sortedSet(set map[string]bool) []string {
	var out []string
	for k := range set {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func sortedKeys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func sortedMapKeys(v reflect.Value) []string {
	out := make([]string, 0, v.Len())
	for _, k := range v.MapKeys() {
		out = append(out, k.String())
	}
	sort.Strings(out)
	return out
}

func appendPath(path []string, k string) []string {
	out := make([]string, len(path), len(path)+1)
	copy(out, path)
	return append(out, k)
}

// dotted renders a key path the way TOML writes it, quoting segments that
// are not bare keys.
func dotted(path []string) string {
	parts := make([]string, len(path))
	for i, p := range path {
		parts[i] = quoteKey(p)
	}
	return strings.Join(parts, ".")
}

// EntryKey names an entry of the array of tables array by its name, as in
// providers[deepseek] or plugins["my server"]. It is how Sources, warnings
// and validation errors spell keys inside [[providers]] and [[plugins]]
// entries, so code looking a key up in Sources must build it the same way.
func EntryKey(array, name string) string {
	return array + "[" + quoteKey(name) + "]"
}

// quoteKey spells k as a TOML key: bare when it can be, else quoted.
func quoteKey(k string) string {
	if k == "" {
		return `""`
	}
	for _, r := range k {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			return QuoteString(k)
		}
	}
	return k
}
