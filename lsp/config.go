package lsp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"go.lsp.dev/protocol"

	"github.com/dsh-lsp/dsh-lsp/reference"
	"github.com/dsh-lsp/dsh-lsp/sessionstore"
)

// settings are the dsh settings of CONTRACT §2: the effective values, and
// the initializationOptions layer they were built on.
type settings struct {
	// sessionsDir is the sessionsDir setting ("" when absent).
	sessionsDir string
	// target is settings.target (nil when absent).
	target *reference.Target
	config reference.Config
	// init is the initializationOptions layer (nil before initialize). It
	// is kept because settings pushed later apply over it key by key
	// instead of replacing it: Neovim's vim.lsp.config pushes
	// `settings = {dsh = {}}` right after initialize, and an empty or
	// partial push must not drop the store the initializationOptions named.
	init settingsLayer
	// contentSearch is the contentSearch setting (default true).
	contentSearch bool
}

func defaultSettings() settings {
	return settings{config: reference.DefaultConfig(), contentSearch: true}
}

// settingKeys are the keys of the settings object; others are ignored
// (editors add their own).
var settingKeys = []string{"sessionsDir", "target", "maxReferences", "candidateLimit", "maxReferenceBytes", "contentSearch"}

// settingsLayer is one source of settings (initializationOptions, or one
// settings.dsh push): the keys of settingKeys it carries, raw. A key set to
// null is carried too: in a push it means "back to the default".
type settingsLayer map[string]json.RawMessage

// SettingsError is an invalid setting; its message names the key.
type SettingsError struct{ Msg string }

// Error returns the message with the "invalid dsh settings: " prefix.
func (e *SettingsError) Error() string { return "invalid dsh settings: " + e.Msg }

// parseLayer reads a settings object into a layer. Absent or null is an
// empty layer; anything but an object is an error.
func parseLayer(raw json.RawMessage) (settingsLayer, error) {
	raw = bytes.TrimSpace(raw)
	layer := settingsLayer{}
	if len(raw) == 0 || string(raw) == "null" {
		return layer, nil
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil {
		return nil, &SettingsError{"the settings must be a JSON object"}
	}
	for _, k := range settingKeys {
		if v, ok := obj[k]; ok {
			layer[k] = bytes.TrimSpace(v)
		}
	}
	return layer, nil
}

// over returns the layer that results from applying push over l, key by
// key (CONTRACT §2): a key the push carries replaces l's, a key it sets to
// null is removed (the default applies), a key it leaves out keeps l's value.
func (l settingsLayer) over(push settingsLayer) settingsLayer {
	out := make(settingsLayer, len(l)+len(push))
	for k, v := range l {
		out[k] = v
	}
	for k, v := range push {
		if string(v) == "null" {
			delete(out, k)
		} else {
			out[k] = v
		}
	}
	return out
}

// parseSettings reads the initializationOptions settings object. Absent or
// null means defaults. Unknown keys are ignored (editors add their own).
func parseSettings(raw json.RawMessage) (settings, error) {
	layer, err := parseLayer(raw)
	if err != nil {
		return defaultSettings(), err
	}
	st, err := layer.resolve()
	if err != nil {
		return defaultSettings(), err
	}
	st.init = layer
	return st, nil
}

// pushedSettings returns the settings that a settings.dsh push (raw) makes
// of the initializationOptions layer init: the push applies over init key
// by key, and the next push starts from init again (each push is the
// client's whole dsh section, not a delta of the previous one).
func pushedSettings(init settingsLayer, raw json.RawMessage) (settings, error) {
	push, err := parseLayer(raw)
	if err != nil {
		return defaultSettings(), err
	}
	st, err := init.over(push).resolve()
	if err != nil {
		return defaultSettings(), err
	}
	st.init = init
	return st, nil
}

// resolve checks the values of a layer and returns the settings they make
// (defaults for the keys the layer does not carry or carries as null).
func (l settingsLayer) resolve() (settings, error) {
	st := defaultSettings()
	if v, ok := l["sessionsDir"]; ok && string(v) != "null" {
		var dir string
		if err := json.Unmarshal(v, &dir); err != nil {
			return st, &SettingsError{"sessionsDir must be a string"}
		}
		if strings.TrimSpace(dir) == "" {
			return st, &SettingsError{"sessionsDir must not be empty"}
		}
		st.sessionsDir = dir // checked once resolved (~, relative), in buildEnvironment
	}
	if v, ok := l["target"]; ok && string(v) != "null" {
		t, err := parseTarget(v, "target")
		if err != nil {
			return st, err
		}
		st.target = t
	}
	if v, ok := l["contentSearch"]; ok && string(v) != "null" {
		if err := json.Unmarshal(v, &st.contentSearch); err != nil {
			return st, &SettingsError{"contentSearch must be a boolean"}
		}
	}
	// Hand the core only its own keys, so that its checks (numbers only,
	// safe integers, ranges) and messages apply exactly.
	core := map[string]json.RawMessage{}
	for _, k := range []string{"maxReferences", "candidateLimit", "maxReferenceBytes"} {
		if v, ok := l[k]; ok {
			core[k] = v
		}
	}
	coreRaw, _ := json.Marshal(core)
	cfg, err := reference.ConfigFromJSON(coreRaw)
	if err != nil {
		return st, &SettingsError{err.Error()}
	}
	st.config = cfg
	return st, nil
}

// parseTarget reads a {sessionId?, cwd?} object; key names the setting or
// parameter for error messages.
func parseTarget(raw json.RawMessage, key string) (*reference.Target, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		return nil, &SettingsError{key + " must be an object {\"sessionId\"?: string, \"cwd\"?: string}"}
	}
	t := &reference.Target{}
	for _, f := range []struct {
		name string
		dst  **string
	}{{"sessionId", &t.SessionID}, {"cwd", &t.CWD}} {
		v, ok := obj[f.name]
		if !ok || string(v) == "null" {
			continue
		}
		var str string
		if err := json.Unmarshal(v, &str); err != nil {
			return nil, &SettingsError{fmt.Sprintf("%s.%s must be a string", key, f.name)}
		}
		*f.dst = &str
	}
	return t, nil
}

// environment is what the settings resolve to: the store and the service.
type environment struct {
	root   string
	source Source
	// service answers from source; prepareService is the one prepare
	// uses, whose session reads go through the server's read limiter and
	// memo (backpressure.go).
	service        *reference.Service
	prepareService *reference.Service
	config         reference.Config
	// retired is closed when another environment replaces this one: the
	// goroutines that follow its store end then.
	retired     chan struct{}
	retiredOnce sync.Once
	// content is the root's content index, nil when content search is
	// off or the source cannot feed one (content.go).
	content *contentSearch
}

// retire marks env as replaced.
func (env *environment) retire() {
	env.retiredOnce.Do(func() { close(env.retired) })
}

// buildEnvironment opens the store for st.
func (s *Server) buildEnvironment(st settings) (*environment, error) {
	flag := st.sessionsDir
	if flag == "" {
		flag = s.opts.SessionsDir
	}
	root, err := s.opts.ResolveRoot(flag)
	if err != nil {
		return nil, &SettingsError{fmt.Sprintf("sessionsDir: cannot resolve the session store root: %v", err)}
	}
	if abs, err := filepath.Abs(root); err == nil {
		root = abs
	}
	// A missing root is an empty store (dsh lists no sessions); a file is
	// a mistake to report now rather than on every listing.
	if fi, err := os.Stat(root); err == nil && !fi.IsDir() {
		return nil, &SettingsError{fmt.Sprintf("sessionsDir: the session store root %q (from sessionsDir, --sessions or DSH_HOME) is not a directory", root)}
	}
	// The current store is reused with its index when the settings name it
	// again; a store no longer named is closed (useEnvironment).
	s.mu.Lock()
	src := s.sources[root]
	s.mu.Unlock()
	opened := false
	if src == nil {
		if src, err = s.openSource(root); err != nil {
			return nil, &SettingsError{fmt.Sprintf("sessionsDir: cannot open session store %q: %v", root, err)}
		}
		opened = true
		s.mu.Lock()
		s.sources[root] = src
		s.mu.Unlock()
	}
	svc, err := reference.NewService(src, st.config)
	if err != nil {
		if opened {
			s.releaseSources(func(r string) bool { return r == root })
		}
		return nil, &SettingsError{err.Error()}
	}
	env := &environment{root: root, source: src, service: svc, config: st.config,
		retired: make(chan struct{}),
		content: s.contentFor(root, src, st)}
	// The configuration was just validated: this cannot fail.
	env.prepareService, _ = reference.NewService(memoizedSurfaces{Source: src, s: s, env: env}, st.config)
	return env, nil
}

// keptStores is how many stores stay open: the current one and the one it
// replaced, so settings that switch between two roots (a multi-root
// workspace's ${workspaceFolder} stores) keep both indexes warm, while a
// client pushing root after root (a settings UI while the user types a
// path) holds at most this many inotify instances and indexes.
const keptStores = 2

// useEnvironment makes env the current environment (call with s.mu held)
// and releases what the previous one held: its goroutines end, and the
// stores beyond the keptStores most recently used are closed with their
// index, watches and inotify instance. A request still running on a
// replaced environment answers from its index as it stood.
func (s *Server) useEnvironment(env *environment) {
	if old := s.env; old != nil && old != env {
		old.retire()
	}
	s.env = env
	root := env.root
	s.recent = append(slices.DeleteFunc(s.recent, func(r string) bool { return r == root }), root)
	if len(s.recent) > keptStores {
		s.recent = slices.Delete(s.recent, 0, len(s.recent)-keptStores)
	}
	s.releaseSourcesLocked(func(r string) bool { return !slices.Contains(s.recent, r) })
}

// releaseSources closes, in the background, the opened stores whose root
// matches drop, and forgets them.
func (s *Server) releaseSources(drop func(root string) bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.releaseSourcesLocked(drop)
}

// releaseSourcesLocked is releaseSources with s.mu held. Closing waits for
// the index's background work (persisting its cache), so it does not run
// on the connection's read goroutine; Serve waits for it before returning.
func (s *Server) releaseSourcesLocked(drop func(root string) bool) {
	for root, src := range s.sources {
		if !drop(root) {
			continue
		}
		delete(s.sources, root)
		if c := s.contents[root]; c != nil {
			delete(s.contents, root)
			s.closing.Add(1)
			go func() {
				defer s.closing.Done()
				c.close()
			}()
		}
		if c, ok := src.(io.Closer); ok {
			s.closing.Add(1)
			go func() {
				defer s.closing.Done()
				if err := c.Close(); err != nil {
					s.logger.Warn("closing session store", "root", root, "error", err)
				}
			}()
		}
	}
}

// openSource opens a store root with Options.OpenSource, or behind the
// sessionstore index (reporting its first pass as progress).
func (s *Server) openSource(root string) (Source, error) {
	if s.opts.OpenSource != nil {
		return s.opts.OpenSource(root)
	}
	return sessionstore.OpenIndexed(root, sessionstore.IndexOptions{
		Progress: func(done, total int) {
			if f := s.progress.Load(); f != nil {
				(*f)(done, total)
			}
		},
		Logf: func(format string, args ...any) { s.logger.Warn(fmt.Sprintf(format, args...)) },
	})
}

// didChangeConfiguration applies settings.dsh over the initializationOptions,
// key by key (pushedSettings); invalid settings are shown as an error and
// the previous settings stay.
func (s *Server) didChangeConfiguration(p *protocol.DidChangeConfigurationParams) {
	var wrapper map[string]json.RawMessage
	if err := json.Unmarshal(p.Settings, &wrapper); err != nil || wrapper == nil {
		// Not an object (or null): nothing for us.
		return
	}
	raw, ok := wrapper["dsh"]
	if !ok {
		// Clients send their whole settings tree; no dsh section means no
		// change for us (Neovim sends {} after initialize).
		return
	}
	s.mu.Lock()
	init := s.settings.init
	s.mu.Unlock()
	st, err := pushedSettings(init, raw)
	var env *environment
	if err == nil {
		env, err = s.buildEnvironment(st)
	}
	if err != nil {
		s.logger.Warn("settings refused", "error", err)
		s.showMessage(protocol.MessageTypeError, "dsh-lsp: "+err.Error()+" (previous settings kept)")
		return
	}
	s.mu.Lock()
	s.settings = st
	s.useEnvironment(env)
	s.mu.Unlock()
	s.logger.Info("settings changed", "root", env.root, "config", fmt.Sprintf("%+v", st.config))
	s.rediagnoseAll()
	s.rediagnoseWhenIndexed(env)
	s.rediagnoseOnChange(env)
}

// badConfiguration shows workspace/didChangeConfiguration params that do
// not decode.
func badConfiguration(s *Server, err error) {
	s.showMessage(protocol.MessageTypeError, "dsh-lsp: invalid workspace/didChangeConfiguration params: "+err.Error())
}

// snapshotEnv returns the current environment and settings.
func (s *Server) snapshotEnv() (*environment, settings) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.env, s.settings
}

// targetFor resolves the target of a document (CONTRACT §2): its own
// dsh/setTarget, else settings.target, else the first workspace folder's
// cwd. Call with s.mu held.
func (s *Server) targetForLocked(uri string) reference.Target {
	if d, ok := s.docs[uri]; ok && d.target != nil {
		return *d.target
	}
	if t, ok := s.pendingTargets[uri]; ok {
		return t
	}
	if s.settings.target != nil {
		return *s.settings.target
	}
	if s.workspace != nil {
		cwd := *s.workspace
		return reference.Target{CWD: &cwd}
	}
	return reference.Target{}
}

// setTargetParams is dsh/setTarget.
type setTargetParams struct {
	TextDocument DocumentRef     `json:"textDocument"`
	Target       json.RawMessage `json:"target"`
}

// badSetTarget shows dsh/setTarget params that do not decode or name no
// document.
func badSetTarget(s *Server, _ error) {
	s.showMessage(protocol.MessageTypeError, "dsh-lsp: dsh/setTarget needs {\"textDocument\":{\"uri\":…},\"target\":{…}}")
}

// setTarget sets a document's own target (it may precede didOpen).
func (s *Server) setTarget(p *setTargetParams) {
	if p.TextDocument.URI == "" {
		badSetTarget(s, nil)
		return
	}
	var t *reference.Target
	if len(p.Target) > 0 && string(p.Target) != "null" {
		var err error
		t, err = parseTarget(p.Target, "target")
		if err != nil {
			s.showMessage(protocol.MessageTypeError, "dsh-lsp: dsh/setTarget: "+strings.TrimPrefix(err.Error(), "invalid dsh settings: "))
			return
		}
	}
	s.mu.Lock()
	if d, ok := s.docs[p.TextDocument.URI]; ok {
		d.target = t
	} else if t != nil {
		s.pendingTargets[p.TextDocument.URI] = *t
	} else {
		delete(s.pendingTargets, p.TextDocument.URI)
	}
	s.mu.Unlock()
	s.scheduleDiagnostics(p.TextDocument.URI)
}
