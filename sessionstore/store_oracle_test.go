package sessionstore

// Store is the full load's reader of one store root (oracle_test.go): the
// definition the index is checked against.
type Store struct {
	layout
	// limit is the read limit (Options.ReadLimit) in bytes.
	limit int64
}

// Options configures OpenWith.
type Options struct {
	// Encoding pins the store encoding; 0 reads each session directory
	// by its own suffix.
	Encoding Encoding
	// ReadLimit is the read limit of a whole-log load (as
	// IndexOptions.ReadLimit).
	ReadLimit int64
}

// OpenWith returns a Store over root configured by o.
func OpenWith(root string, o Options) (*Store, error) {
	l, err := newLayout(root, o.Encoding)
	if err != nil {
		return nil, err
	}
	return &Store{layout: l, limit: effectiveReadLimit(o.ReadLimit)}, nil
}

// ReadLimit returns the store's read limit in bytes.
func (s *Store) ReadLimit() int64 { return s.limit }

// Root returns the store root directory.
func (s *Store) Root() string { return s.root }
