package sessionstore

import (
	"io/fs"
	"path/filepath"
	"strconv"
	"time"

	"github.com/dsh-lsp/dsh-lsp/internal/jsjson"
	"github.com/dsh-lsp/dsh-lsp/reference"
	"github.com/dsh-lsp/dsh-lsp/sessionstore/transcript"
)

// fileSig identifies one version of a file: a different device/inode
// means the file was replaced, a smaller size that it was truncated.
type fileSig struct {
	Dev, Ino uint64
	Size     int64
	MtimeNs  int64
}

func sigOf(fi fs.FileInfo) fileSig {
	s := fileSig{Size: fi.Size(), MtimeNs: fi.ModTime().UnixNano()}
	s.Dev, s.Ino = fileIdentity(fi)
	return s
}

// entry is the index record of one session directory. Exported fields are
// persisted in the cache; the rest is derived from them (derive).
type entry struct {
	Proj, Seg string
	// Sig is the signature of the indexed transcript at the last parse,
	// Enc (with the flags below) its encoding.
	Sig fileSig
	// Listed* are the listing form of the header (as listing reads it),
	// set when Listed is.
	ListedID        string
	ListedCWD       *string
	ListedCreatedAt int64
	ListedRaw       []byte
	// ReadID and HeaderLine are the header a whole parse validated ("" when
	// the parse failed before): what a read by id checks and answers with.
	ReadID     string
	HeaderLine []byte
	// State is the committed parse state, encoded (logState.encode): a
	// session's state is decoded only while a read or a resumed parse
	// uses it. It is absent when ReadErr is set.
	State savedState
	// TitleText is the title of the view (after derive).
	TitleText *string

	// faults are the entry's errors and torn view, nil without any.
	faults *faults

	// The flags and Enc are kept together: one between two words would
	// take a word of its own (0.8 MB at 100,000 sessions).
	Enc             Encoding
	HasRaw, HasZstd bool
	// NoHeaderYet: the header is not complete yet (not listed).
	NoHeaderYet bool
	// Listed says the Listed* fields hold the header, IdentityOK that it
	// lies at its own path.
	Listed, IdentityOK bool
	// HeaderFromListed says HeaderLine is nil because it is ListedRaw with
	// its type member put back (headerLine): one copy of the header kept.
	HeaderFromListed bool
	// TitleDerived says TitleText was derived from State: persisted, a
	// restart does not decode it.
	TitleDerived bool
	// Clean says derive found no error and a view equal to State: a
	// restart takes the entry as persisted, without decoding State.
	Clean bool
	// Whole says State's parse committed every byte of the transcript Sig
	// describes, whose CRC-32C is Sum.
	Whole bool
	// readByListedID, set on an entry loaded from the cache, says a read
	// of ListedID loads this entry in the listing the cache persisted
	// (Indexed.cachedGen): the catalog of that listing takes its title
	// from it without the id lookup (byid.go).
	readByListedID bool
	// Sum is the CRC-32C of the transcript's bytes when Whole (keepSameBytes,
	// contentVersion); beside the flags, it takes no word of its own.
	Sum uint32
}

// faults are what few entries have, kept behind one pointer (72 bytes a
// session at 100,000 sessions otherwise). A faults value is never
// modified once an entry points to it: entries are copied and published
// entries read without locks, so a change sets new faults (setFaults).
type faults struct {
	// ReadErr is the error a read gives under the read limit ReadErrLimit
	// (the fold's own is in State), kept until the file changes
	// (persisted).
	ReadErr      transcript.SavedError
	ReadErrLimit int64
	// torn, when set, is the view reads answer from instead of State: State
	// plus the lines of a torn final zstd frame.
	torn     *logState
	titleErr error
	// err is the read's error (ReadErr, else the fold's, crash closers
	// included), without the session id and path.
	err error
}

// fault returns e's faults (the zero value without any).
func (e *entry) fault() faults {
	if e.faults == nil {
		return faults{}
	}
	return *e.faults
}

// setFaults sets e's faults to f.
func (e *entry) setFaults(f faults) {
	e.faults = nil
	// Field by field: == on two errors panics for an uncomparable type.
	if f.ReadErr != (transcript.SavedError{}) || f.ReadErrLimit != 0 || f.torn != nil || f.titleErr != nil || f.err != nil {
		e.faults = &f
	}
}

func (e *entry) torn() *logState { return e.fault().torn }

// view returns the state reads answer from, decoded: nil when there is
// none or State does not decode (errStateEncoding).
func (e *entry) view() (*logState, error) {
	if t := e.torn(); t != nil {
		return t, nil
	}
	b, err := e.State.bytes()
	if err != nil {
		return nil, err
	}
	return decodeLogState(b)
}

// tail is where the view's parse stopped.
func (e *entry) tail() stateTail {
	if t := e.torn(); t != nil {
		return stateTail{Offset: t.Offset, TailCRC: t.TailCRC, Sum: t.Sum}
	}
	return e.State.tail()
}

// setState keeps committed, encoded, and view when it differs from it.
func (e *entry) setState(committed, view *logState) {
	e.State = savedState{held: committed.encode()}
	e.Whole, e.Sum = view == committed && committed.Offset == e.Sig.Size, committed.Sum
	f := e.fault()
	f.torn = nil
	if view != committed {
		f.torn = view
	}
	e.setFaults(f)
}

// savedState is an entry's committed parse state, encoded
// (logState.encode): held in memory, or, for an entry loaded from the
// cache, the place of its bytes in the cache file's state section, read
// when a read or a resumed parse uses them. A restart so keeps only the
// states it uses (56 of a 96 MB cache at 100,000 small sessions are
// states).
type savedState struct {
	held []byte
	// in is the loaded cache's state section when the bytes lie there:
	// n bytes at off, whose CRC-32C is sum.
	in  *stateSection
	off int64
	n   uint32
	sum uint32
}

// present reports whether there is a state (none when the read failed).
func (s savedState) present() bool { return s.held != nil || s.in != nil }

// bytes returns the encoded state: errStateEncoding when there is none, or
// when the cache's copy cannot be read back as it was written.
func (s savedState) bytes() ([]byte, error) {
	if s.in != nil {
		return s.in.read(s.off, s.n, s.sum)
	}
	if s.held == nil {
		return nil, errStateEncoding
	}
	return s.held, nil
}

// tail is where the state's parse stopped (tailOf), read without the rest
// of the state: Version asks for it on every memoized read, and a state in
// the cache file would otherwise be read and checked whole each time. The
// tail is not checked against the state's sum: it only tells whether the
// transcript still holds what was indexed, and a read of the state checks
// the whole.
func (s savedState) tail() stateTail {
	if s.in == nil {
		return tailOf(s.held)
	}
	return tailOf(s.in.head(s.off, s.n))
}

// headerTypeMember opens a header line as dsh writes it; the listing form
// of the header (transcript.Header.Object) is the line without it.
const headerTypeMember = `{"type":"session",`

// headerLine returns the header line a read answers with.
func (e *entry) headerLine() []byte {
	if e.HeaderFromListed {
		return append([]byte(headerTypeMember), e.ListedRaw[1:]...)
	}
	return e.HeaderLine
}

// setHeaderLine keeps line as e's header line, as ListedRaw when it is
// that with its type member (the common case: dsh writes compact headers).
func (e *entry) setHeaderLine(line []byte) {
	e.HeaderLine, e.HeaderFromListed = nil, false
	if len(e.ListedRaw) > 1 && len(line) == len(headerTypeMember)+len(e.ListedRaw)-1 &&
		string(line[:len(headerTypeMember)]) == headerTypeMember && string(line[len(headerTypeMember):]) == string(e.ListedRaw[1:]) {
		e.HeaderFromListed = true
		return
	}
	e.HeaderLine = append([]byte(nil), line...)
}

func (e *entry) path(root string) string {
	return filepath.Join(root, e.Proj, e.Seg, e.Enc.FileName())
}

// derive fills the derived fields from the persisted ones and view (nil
// when State is nil or does not decode).
func (e *entry) derive(view *logState) {
	f := e.fault()
	f.titleErr, f.err = nil, f.ReadErr.Err()
	if f.err == nil && view == nil {
		f.err = unreadable(fs.ErrNotExist)
	}
	if f.err == nil {
		f.err = view.Fold.FinishErr(e.ReadID) // the log may still grow
	}
	defer func() {
		e.setFaults(f)
		e.Clean = f.err == nil && f.titleErr == nil && f.torn == nil
	}()
	if f.err != nil || view.Fold.Title == nil {
		e.TitleText, e.TitleDerived = nil, false
		return
	}
	if e.TitleDerived && f.torn == nil && (e.TitleText == nil || len(*e.TitleText) <= MaxTitleBytes) {
		return
	}
	e.TitleText, e.TitleDerived = nil, false
	t, err := view.Fold.LatestTitle()
	if err != nil {
		f.titleErr = attach(err, e.ReadID, "")
		return
	}
	if t != nil {
		s := t.Text()
		e.TitleText = &s
	}
	e.TitleDerived = f.torn == nil
}

// restore derives the fields of an entry decoded from the cache: as
// persisted when it was Clean (its derived errors are then none, as
// decoded), else from its decoded State.
func (e *entry) restore() {
	if e.Clean && e.fault().ReadErr.Kind == 0 && e.State.present() {
		return
	}
	view, err := e.view()
	if err != nil && e.State.present() {
		// Not a state this version wrote: parse again at the next scan.
		e.State, e.Sig.Size = savedState{}, -1
	}
	e.derive(view)
}

// answerErr is the error a read of id through e gives, nil when e answers.
func (e *entry) answerErr(id, root string) error {
	if err := e.fault().err; err != nil {
		return attach(err, id, e.path(root))
	}
	if e.ReadID != id {
		return attach(transcript.Corruptf("header id %s does not match the requested id", jsjson.Quote(e.ReadID)), id, e.path(root))
	}
	return nil
}

// titleResult is what ReadTitles answers for id through e.
func (e *entry) titleResult(id, root string) reference.TitleResult {
	r := reference.TitleResult{SessionID: id, Err: e.answerErr(id, root)}
	if r.Err == nil {
		r.Title, r.Err = e.TitleText, e.fault().titleErr
	}
	return r
}

// transient reports whether e's error may go away without the file
// changing (an I/O error, or a read-limit error under another limit).
func (e *entry) transient(limit int64) bool {
	f := e.fault()
	if f.ReadErr.Limit {
		return f.ReadErrLimit != limit
	}
	return f.ReadErr.Kind == KindIO
}

// hot reports whether a quick scan must stat e's transcript.
func (e *entry) hot(now time.Time) bool {
	return e.Sig.Size < 0 || e.NoHeaderYet || now.UnixNano()-e.Sig.MtimeNs < int64(hotWindow)
}

// reparse is the job of parsing e's transcript, whose signature is now
// sig, over old.
func (e *entry) reparse(sig fileSig, old *entry) indexJob {
	return indexJob{proj: e.Proj, seg: e.Seg, old: old, sig: sig, enc: e.Enc, hasRaw: e.HasRaw, hasZstd: e.HasZstd}
}

// contentVersion is SessionVersions' version of e: "enc:size:sum" when its
// parse covered the whole file (a touch or a copy keeps it), else
// transcriptVersion, a form with two more fields.
func (e *entry) contentVersion() string {
	if !e.Whole {
		return transcriptVersion(e.Enc, e.Sig)
	}
	var buf [3 * 21]byte
	b := strconv.AppendUint(buf[:0], uint64(e.Enc), 10)
	b = strconv.AppendInt(append(b, ':'), e.Sig.Size, 10)
	b = strconv.AppendUint(append(b, ':'), uint64(e.Sum), 10)
	return string(b)
}

// transcriptVersion names one version of a transcript: its encoding and
// the file's identity, size and modification time, "enc:dev:ino:size:mtime"
// in decimal (persisted by the content index). Built without fmt: a
// content sync names every session's version (100,000 at a time).
func transcriptVersion(enc Encoding, sig fileSig) string {
	var buf [5 * 21]byte
	b := strconv.AppendUint(buf[:0], uint64(enc), 10)
	b = strconv.AppendUint(append(b, ':'), sig.Dev, 10)
	b = strconv.AppendUint(append(b, ':'), sig.Ino, 10)
	b = strconv.AppendInt(append(b, ':'), sig.Size, 10)
	b = strconv.AppendInt(append(b, ':'), sig.MtimeNs, 10)
	return string(b)
}
