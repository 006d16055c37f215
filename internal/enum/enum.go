// Package enum names the values of kwatch's small enumerations (a
// severity, a confidence, a direction) from a table, so that every String
// method is one line over its table and none is a switch of its own.
// Stateless; safe for concurrent use.
package enum

// Name returns names[v], or fallback when v is past the table or its
// entry is empty. It does not allocate.
func Name[T ~uint8](names []string, v T, fallback string) string {
	if int(v) < len(names) && names[v] != "" {
		return names[v]
	}
	return fallback
}
