-- Imports cycle_b, which imports this file (for ../import_cycle.fut).
import "cycle_b"
def a = 1i32
