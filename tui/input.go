package tui

import (
	"strings"
	"unicode"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
)

// input is a one-line search field. bubbles/textinput would pull in a
// clipboard module kwatch does not need and a blinking cursor that makes
// screens timing-dependent; a search box needs only typing, backspace and
// clear.
type input struct {
	prompt      string
	placeholder string
	value       []rune
	focused     bool
}

// maxInput bounds the search text: a filter longer than this is a paste
// accident, not a query.
const maxInput = 256

func (in *input) Value() string     { return string(in.value) }
func (in *input) SetValue(s string) { in.value = []rune(s) }
func (in *input) Focus()            { in.focused = true }
func (in *input) Blur()             { in.focused = false }

// Update applies one key or paste to the text; it reports whether the
// value changed.
func (in *input) Update(msg tea.Msg) bool {
	switch msg := msg.(type) {
	case tea.KeyPressMsg:
		switch msg.String() {
		case "backspace", "ctrl+h":
			if len(in.value) > 0 {
				in.value = in.value[:len(in.value)-1]
				return true
			}
			return false
		case "ctrl+u":
			changed := len(in.value) > 0
			in.value = in.value[:0]
			return changed
		case "ctrl+w":
			s := strings.TrimRightFunc(string(in.value), unicode.IsSpace)
			i := strings.LastIndexFunc(s, unicode.IsSpace)
			in.value = []rune(s[:i+1])
			return true
		}
		if msg.Text != "" && msg.Mod&^tea.ModShift == 0 {
			return in.insert(msg.Text)
		}
	case tea.PasteMsg:
		return in.insert(msg.Content)
	}
	return false
}

// edit handles a key while the box is being typed in: accept leaves the
// box as it is, cancel clears it. It reports whether the text changed, so
// the caller re-filters.
func (in *input) edit(msg tea.KeyPressMsg, k *KeyMap) (changed bool) {
	switch {
	case key.Matches(msg, k.SearchAccept):
		in.Blur()
		return false
	case key.Matches(msg, k.SearchCancel):
		in.Blur()
		in.SetValue("")
		return true
	}
	return in.Update(msg)
}

func (in *input) insert(s string) bool {
	changed := false
	for _, r := range s {
		if len(in.value) >= maxInput {
			break
		}
		if unicode.IsPrint(r) {
			in.value = append(in.value, r)
			changed = true
		}
	}
	return changed
}

// View renders the prompt and text with a block cursor when focused.
func (in *input) View() string {
	s := in.prompt + string(in.value)
	if in.focused {
		s += "█"
	}
	if len(in.value) == 0 && in.placeholder != "" {
		s += " " + in.placeholder
	}
	return s
}
