-- Imports cycle_a, which imports this file (for ../import_cycle.fut).
import "cycle_a"
def b = 2i32
