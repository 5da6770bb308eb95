// Command goyaml reads a JSON list of YAML texts on standard input and
// prints, for each, the JSON the EKS authenticator makes of it: go-yaml v2
// decodes the text, its keys become strings and the result is JSON, as
// sigs.k8s.io/yaml's YAMLToJSON does (without a target type). An entry
// holds "json" or "error". Built against Debian's golang-gopkg-yaml.v2-dev
// (go-yaml 2.4.0, the version the authenticator requires).
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"

	"gopkg.in/yaml.v2"
)

// jsonable turns go-yaml's values into values encoding/json takes: map
// keys become strings the way sigs.k8s.io/yaml turns them into strings.
func jsonable(v interface{}) (interface{}, error) {
	switch v := v.(type) {
	case map[interface{}]interface{}:
		out := make(map[string]interface{}, len(v))
		for k, x := range v {
			var key string
			switch k := k.(type) {
			case string:
				key = k
			case int:
				key = strconv.Itoa(k)
			case int64:
				key = strconv.FormatInt(k, 10)
			case float64:
				key = strconv.FormatFloat(k, 'g', -1, 32)
			case bool:
				key = strconv.FormatBool(k)
			default:
				return nil, fmt.Errorf("unsupported map key %#v", k)
			}
			if _, seen := out[key]; seen {
				return nil, fmt.Errorf("two keys read as %q", key)
			}
			value, err := jsonable(x)
			if err != nil {
				return nil, err
			}
			out[key] = value
		}
		return out, nil
	case []interface{}:
		out := make([]interface{}, len(v))
		for i, x := range v {
			value, err := jsonable(x)
			if err != nil {
				return nil, err
			}
			out[i] = value
		}
		return out, nil
	}
	return v, nil
}

func convert(text string) map[string]string {
	var doc interface{}
	if err := yaml.Unmarshal([]byte(text), &doc); err != nil {
		return map[string]string{"error": "yaml: " + err.Error()}
	}
	value, err := jsonable(doc)
	if err != nil {
		return map[string]string{"error": "keys: " + err.Error()}
	}
	out, err := json.Marshal(value)
	if err != nil {
		return map[string]string{"error": "json: " + err.Error()}
	}
	return map[string]string{"json": string(out)}
}

func main() {
	var texts []string
	if err := json.NewDecoder(os.Stdin).Decode(&texts); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	results := make([]map[string]string, len(texts))
	for i, text := range texts {
		results[i] = convert(text)
	}
	if err := json.NewEncoder(os.Stdout).Encode(results); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
}
