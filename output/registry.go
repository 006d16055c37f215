package output

// Registry holds the formats of one kind, in the order help lists them.
type Registry[F any] struct {
	formats []*F
	name    func(*F) string
}

// Lookup returns the format called name if accept (nil: every format)
// admits it.
func (r *Registry[F]) Lookup(name string, accept func(*F) bool) (*F, bool) {
	for _, f := range r.formats {
		if r.name(f) == name && (accept == nil || accept(f)) {
			return f, true
		}
	}
	return nil, false
}

// Names lists the names of the formats accept (nil: every format) admits,
// for a flag's help and for the refusal of a format a command cannot write.
func (r *Registry[F]) Names(accept func(*F) bool) []string {
	var names []string
	for _, f := range r.formats {
		if accept == nil || accept(f) {
			names = append(names, r.name(f))
		}
	}
	return names
}
