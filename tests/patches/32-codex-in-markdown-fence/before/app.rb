puts "a"
puts "b"
