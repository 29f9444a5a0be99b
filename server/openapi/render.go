package openapi

// renderPaths writes the paths object of a document in dialect c.dl,
// referencing schemas through c.
func (c *converter) renderPaths(items []pathItem) obj {
	paths := obj{}
	for _, p := range items {
		p = hoistSingle(p)
		po := obj{}
		if len(p.params) > 0 {
			po["parameters"] = c.renderParams(p.params)
		}
		for _, o := range p.ops {
			po[o.method] = c.renderOp(o)
		}
		paths[p.path] = po
	}
	return paths
}

func (c *converter) renderParams(ps []param) []any {
	out := make([]any, 0, len(ps))
	for _, p := range ps {
		po := obj{"name": p.name, "in": p.in}
		if p.required {
			po["required"] = true
		}
		if c.dl == v3 {
			po["schema"] = obj{"type": p.typ, "uniqueItems": true}
		} else {
			po["type"], po["uniqueItems"] = p.typ, true
		}
		out = append(out, po)
	}
	return out
}

func (c *converter) renderOp(o operation) obj {
	op := obj{"operationId": o.id, "tags": []string{o.tag}}
	if o.action != "" {
		op["x-kubernetes-action"] = o.action
	}
	if o.gvk != nil {
		op["x-kubernetes-group-version-kind"] = *o.gvk
	}
	params := c.renderParams(o.params)
	responses := obj{}
	for _, r := range o.responses {
		ro := obj{"description": r.description}
		if r.ref != "" || r.typ != "" {
			var ref obj
			if r.ref != "" {
				ref = c.ref(r.ref, nil)
			} else {
				ref = obj{"type": r.typ}
			}
			if c.dl == v3 {
				content := obj{}
				for _, mt := range o.produces {
					content[mt] = obj{"schema": ref}
				}
				ro["content"] = content
			} else {
				ro["schema"] = ref
			}
		}
		responses[r.code] = ro
	}
	responses[codeUnauthorized.code] = obj{"description": codeUnauthorized.description}
	op["responses"] = responses
	if c.dl == v3 {
		if o.requestRef != "" {
			content := obj{}
			for _, mt := range o.requestTypes {
				content[mt] = obj{"schema": c.ref(o.requestRef, nil)}
			}
			body := obj{"content": content}
			if o.requestRequired {
				body["required"] = true
			}
			op["requestBody"] = body
		}
	} else {
		consumes := o.requestTypes
		switch {
		case o.consumes != nil:
			consumes = o.consumes
		case len(consumes) == 0:
			consumes = []string{mediaAny}
		}
		if len(consumes) > 0 {
			op["consumes"] = consumes
		}
		op["produces"], op["schemes"] = o.produces, []string{"https"}
		if o.requestRef != "" {
			bp := obj{"in": "body", "name": "body", "schema": c.ref(o.requestRef, nil)}
			if o.requestRequired {
				bp["required"] = true
			}
			params = append([]any{bp}, params...)
		}
	}
	if len(params) > 0 {
		op["parameters"] = params
	}
	return op
}

// hoistSingle moves the parameters of a path's only operation to the path,
// as upstream lays such paths out. PATCH keeps its own: kubectl looks for
// fieldValidation among the PATCH operation's parameters.
func hoistSingle(p pathItem) pathItem {
	if len(p.ops) != 1 || p.ops[0].method == opPatch || len(p.ops[0].params) == 0 {
		return p
	}
	op := p.ops[0]
	p.params = joinParams(p.params, op.params)
	op.params = nil
	p.ops = []operation{op}
	return p
}
