puts "a"
puts "c"
