package sessionstore

import (
	"path/filepath"
	"runtime"
	"testing"

	"github.com/dsh-lsp/dsh-lsp/sessionstore/storepath"
)

// TestProjectKeyWindowsCwds: dsh's projectKey is the same pure function on
// every OS (spec §1.2); Windows cwds keep their drive letter's case, lose
// the colon and backslashes to single dashes, and UNC prefixes collapse.
// "C:\Users\bob\w" is one of dsh's own vectors (TestPathVectors); the rest
// follow the same rule.
func TestProjectKeyWindowsCwds(t *testing.T) {
	cases := []struct{ cwd, key string }{
		{`C:\Users\bob\w`, "--C-Users-bob-w--"},
		{`c:\users\bob\w`, "--c-users-bob-w--"},
		{`C:/Users/bob/w`, "--C-Users-bob-w--"},
		{`C:\`, "--C---"},
		{`D:\src\my app\`, "--D-src-my~0020app---"},
		{`\\server\share\proj`, "--server-share-proj--"},
		{`\\?\C:\very\long`, "--~003F-C-very-long--"},
		{`C:\Users\José\proj`, "--C-Users-Jos~00E9-proj--"},
		{`\`, "--root--"},
	}
	for _, c := range cases {
		if got, err := storepath.ProjectKey(c.cwd); err != nil || got != c.key {
			t.Errorf("storepath.ProjectKey(%q) = %q, %v; want %q", c.cwd, got, err, c.key)
		}
	}
}

// TestSessionPathPerOS: the transcript path joins the root with the host's
// separator, whatever the cwd's own separators.
func TestSessionPathPerOS(t *testing.T) {
	cwd := `C:\Users\bob\w`
	root := filepath.Join(t.TempDir(), "sessions")
	got, err := SessionPath(root, &cwd, "s-1", Zstd)
	if err != nil {
		t.Fatal(err)
	}
	want := root + string(filepath.Separator) + "--C-Users-bob-w--" + string(filepath.Separator) + "s-1" + string(filepath.Separator) + "session.jsonl.zstd"
	if got != want {
		t.Errorf("SessionPath = %s, want %s", got, want)
	}
}

// TestResolveRootPerOS: the default store is <home>/.dsh/sessions with the
// home of the OS (HOME; %USERPROFILE% on Windows, as Node's os.homedir),
// DSH_HOME moves it unless blank, and "~", "~/" and "~\" expand against
// that home. The rows of the other OS are skipped: their absolute paths
// mean nothing here.
func TestResolveRootPerOS(t *testing.T) {
	type row struct {
		name, home, dshHome, flag, want string
	}
	var rows []row
	if runtime.GOOS == "windows" {
		rows = []row{
			{"default", `C:\Users\bob`, "", "", `C:\Users\bob\.dsh\sessions`},
			{"blank DSH_HOME", `C:\Users\bob`, " \t", "", `C:\Users\bob\.dsh\sessions`},
			{"DSH_HOME", `C:\Users\bob`, `D:\dsh`, "", `D:\dsh\sessions`},
			{"DSH_HOME with forward slashes", `C:\Users\bob`, `D:/dsh/`, "", `D:\dsh\sessions`},
			{`DSH_HOME ~\`, `C:\Users\bob`, `~\dshome`, "", `C:\Users\bob\dshome\sessions`},
			{"DSH_HOME ~/", `C:\Users\bob`, `~/dshome`, "", `C:\Users\bob\dshome\sessions`},
			{"flag wins", `C:\Users\bob`, `D:\dsh`, `E:\store`, `E:\store`},
			{`flag ~\`, `C:\Users\bob`, "", `~\store`, `C:\Users\bob\store`},
			{"UNC DSH_HOME", `C:\Users\bob`, `\\server\share\dsh`, "", `\\server\share\dsh\sessions`},
		}
	} else {
		rows = []row{
			{"default", "/home/alice", "", "", "/home/alice/.dsh/sessions"},
			{"blank DSH_HOME", "/home/alice", " \t", "", "/home/alice/.dsh/sessions"},
			{"DSH_HOME", "/home/alice", "/srv/dsh", "", "/srv/dsh/sessions"},
			{"DSH_HOME ~", "/home/alice", "~", "", "/home/alice/sessions"},
			{"DSH_HOME ~/", "/home/alice", "~/dshome/", "", "/home/alice/dshome/sessions"},
			{`DSH_HOME ~\`, "/home/alice", `~\dshome`, "", "/home/alice/dshome/sessions"},
			{"flag wins", "/home/alice", "/srv/dsh", "/data/store", "/data/store"},
			{"flag ~/", "/home/alice", "", "~/store", "/home/alice/store"},
			{"flag cleaned", "/home/alice", "", "/data//store/", "/data/store"},
		}
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			if runtime.GOOS == "windows" {
				t.Setenv("USERPROFILE", r.home)
			} else {
				t.Setenv("HOME", r.home)
			}
			t.Setenv("DSH_HOME", r.dshHome)
			got, err := ResolveRoot(r.flag)
			if err != nil || got != r.want {
				t.Errorf("ResolveRoot(%q) with home %q, DSH_HOME %q = %q, %v; want %q", r.flag, r.home, r.dshHome, got, err, r.want)
			}
		})
	}
}
