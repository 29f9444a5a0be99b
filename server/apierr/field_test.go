package apierr

import "testing"

func TestFieldErrorBody(t *testing.T) {
	t.Parallel()
	tests := []struct {
		err  *FieldError
		want string
	}{
		{Invalid("spec.replicas", int64(-1), "must be greater than or equal to 0"), "spec.replicas: Invalid value: -1: must be greater than or equal to 0"},
		{Invalid("spec.rules[0]", OmitValue, "specifying one of OnExitCodes and OnPodConditions is required"), "spec.rules[0]: Invalid value: specifying one of OnExitCodes and OnPodConditions is required"},
		{Invalid("spec.name", "x", "bad"), `spec.name: Invalid value: "x": bad`},
		{Required("spec.selector", ""), "spec.selector: Required value"},
	}
	for _, tt := range tests {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("got %q, want %q", got, tt.want)
		}
	}
}
