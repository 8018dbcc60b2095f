package oracle

import "errors"

func killProcess(int) error { return errors.New("not on Windows") }

func stopProcess(int) error { return errors.New("not on Windows") }
